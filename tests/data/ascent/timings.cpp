// Writes ascent_filter_times_<rank>.csv as Ascent 0.9's flow::Workspace::execute and
// AscentRuntime::Cleanup do (src/libs/flow/flow_workspace.cpp, flow_timer.cpp,
// src/libs/ascent/runtimes/ascent_main_runtime.cpp): per filter "<cycle> <name> <seconds>"
// with std::fixed and the float seconds of flow::Timer, then "<cycle> [total] <seconds>".
// The filters are the graph Ascent builds for one contour pipeline (pl1/f1) rendered by one
// pseudocolor plot (s1/p1), in a plausible order; each does some arithmetic of its own size.
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
using namespace std::chrono;

struct Timer {  // flow::Timer
  high_resolution_clock::time_point m_start = high_resolution_clock::now();
  float elapsed() const {
    return duration_cast<duration<float>>(high_resolution_clock::now() - m_start).count();
  }
};

static volatile double sink;
static void work(long n) {
  double s = 0;
  for (long i = 1; i <= n; ++i) s += std::sqrt((double)i);
  sink = s;
}

int main(int argc, char **argv) {
  int rank = argc > 1 ? std::atoi(argv[1]) : 0;
  std::vector<std::pair<std::string, long>> filters = {
      {"source", 2000},         {"verify", 40000},
      {"strip_garbage_ascent_ghosts", 300000},
      {"default_queries_endpoint", 1000}, {"default_filters_endpoint", 1000},
      {"pl1_f1_contour", 2000000}, {"s1_p1", 50000},         {"s1_p1_bounds", 80000},
      {"create_scene_s1", 20000}, {"add_plot_s1_p1", 30000}, {"s1_renders", 10000},
      {"exec_s1", 4000000}};
  std::stringstream m_timing_info;
  int g_timing_exec_count = 0;
  for (int cycle = 0; cycle < 3; ++cycle) {  // three calls of ascent.execute(actions)
    Timer t_total_exec;
    for (auto &f : filters) {
      Timer t_flt_exec;
      work(f.second * (1 + rank));
      m_timing_info << g_timing_exec_count << " " << f.first << " " << std::fixed
                    << t_flt_exec.elapsed() << "\n";
    }
    m_timing_info << g_timing_exec_count << " [total] " << std::fixed
                  << t_total_exec.elapsed() << "\n";
    g_timing_exec_count++;
  }
  std::stringstream fname;
  fname << "ascent_filter_times" << "_" << rank << ".csv";
  std::ofstream ftimings;
  ftimings.open(fname.str(), std::ofstream::out | std::ofstream::app);
  ftimings << m_timing_info.str();
  ftimings.close();
}

// Small C++ program for the gprof corpus: templates and overloads give names with spaces,
// std::sort recursion gives deep call chains.
#include <algorithm>
#include <cstdio>
#include <vector>

template <typename T> static T checksum(const std::vector<T>& v) {
    T s = 0;
    for (const T& x : v) s = s * 31 + x;
    return s;
}

static void fill(std::vector<long>& v, long seed) {
    for (auto& x : v) { seed = seed * 6364136223846793005L + 1; x = seed >> 20; }
}

static long round_trip(int n) {
    std::vector<long> v(n);
    fill(v, n);
    std::sort(v.begin(), v.end());
    return checksum(v);
}

int main() {
    long r = 0;
    for (int i = 0; i < 30; i++) r += round_trip(200000 + i);
    std::printf("%ld\n", r);
    return 0;
}

/* Built without -pg: gprof sees its samples but no calls. */
double kernel(long n) {
    double s = 0;
    for (long i = 1; i <= n; i++) s += 1.0 / (double)i;
    return s;
}

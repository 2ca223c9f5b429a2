// Compile-time and run-time recursion, no headers: the compiler's parser, template
// instantiation and optimisation passes on a small translation unit.
template <int N> struct Fib { static constexpr long value = Fib<N - 1>::value + Fib<N - 2>::value; };
template <> struct Fib<1> { static constexpr long value = 1; };
template <> struct Fib<0> { static constexpr long value = 0; };

long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
bool is_odd(unsigned n);
bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }

long run(int n) {
    long sum = Fib<60>::value;
    for (int i = 0; i < n; ++i) sum += is_even(i) ? fib(i % 20) : -fib(i % 15);
    return sum;
}

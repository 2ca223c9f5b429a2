#include <stdio.h>
#include <stdlib.h>

static double weight(int i)
{
    double w = 0.0;
    for (int k = 0; k < 40; k++)
        w += (double)((i + k) % 7) * 0.5;
    return w;
}

static double sweep(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        s += a[i] * weight(i);
        if (a[i] > 0.5)
            s -= 0.25;
    }
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    double *a = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        a[i] = (double)(i % 10) / 10.0;
    double total = 0.0;
    for (int r = 0; r < 5; r++)
        total += sweep(a, n);
    printf("%f\n", total);
    free(a);
    return 0;
}

// A CPU-bound program for Java Flight Recorder: main calls middle and other, both end in leaf.
public class Work {
    static double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += Math.sqrt(i) * (i % 7); return s; }
    static double middle(int n) { return leaf(n) + leaf(n / 2); }
    static double other(int n) { double s = 0; for (int k = 0; k < 4; k++) s += leaf(n / 4); return s; }
    public static void main(String[] args) {
        double t = 0;
        long end = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < end) t += middle(2_000_000) + other(2_000_000);
        System.out.println((long) t);
    }
}

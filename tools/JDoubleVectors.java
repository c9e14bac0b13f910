// The test vectors of util/jdouble.c: doubles and what Java 17's Double.toString prints for
// them (JDK 17's FloatingDecimal, the algorithm before JDK 19's shortest-digits rewrite, which
// the Berkeley parser's outputs were printed with). One line per value: the 16 hex digits of
// its bits, a tab, Double.toString's text. Deterministic (fixed seeds); regenerate with Java 17
// (`java -version` must say 17):
//     java tools/JDoubleVectors.java > test/data/jdouble.tsv
import java.util.LinkedHashSet;
import java.util.Random;

public class JDoubleVectors {
    static final LinkedHashSet<Long> bits = new LinkedHashSet<>();

    static void add(double d) { bits.add(Double.doubleToRawLongBits(d)); }

    static void around(double d) { // d and its neighbours, both signs
        for (double x : new double[] {d, Math.nextUp(d), Math.nextDown(d)}) {
            add(x);
            add(-x);
        }
    }

    static void neighbours(double d) { // d and its neighbours
        add(d);
        add(Math.nextUp(d));
        add(Math.nextDown(d));
    }

    public static void main(String[] args) {
        if (!System.getProperty("java.specification.version").equals("17"))
            throw new IllegalStateException("run with Java 17, not " +
                                            System.getProperty("java.version"));
        // The special values and the ends of the range.
        for (double d : new double[] {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY,
                                      Double.NEGATIVE_INFINITY, Double.MAX_VALUE,
                                      Double.MIN_VALUE, Double.MIN_NORMAL, 1.0, 0.5, 0.1, 2.0E-3,
                                      1.0E23, 2.0E23, 9.007199254740993E15, 5.0E-324,
                                      2.82879384806159E17, Math.scalb(1.0, -44)})
            around(d);
        bits.add(0x7ff0000000000001L); // a signalling NaN and a negative NaN: "NaN" too
        bits.add(0xfff8000000000000L);
        // Powers of ten (as Java reads them) with their neighbours; every power of two (where
        // the spacing of doubles halves below), every 16th with its neighbours.
        for (int e = -325; e <= 309; e++)
            neighbours(Double.parseDouble("1.0E" + e));
        for (int e = -1074; e <= 1023; e++)
            if (e % 16 == 0)
                neighbours(Math.scalb(1.0, e));
            else
                add(Math.scalb(1.0, e));
        // Where Double.toString switches between plain and E notation: 1e-3 and 1e7.
        for (String s : new String[] {"0.001", "0.00099999", "0.0009999999999999998", "9999999.0",
                                      "9999999.999999998", "1.0E7", "10000000.000000002",
                                      "0.0010000000000000002", "9.999999999999999E-4",
                                      "9999999.999999999", "0.01", "0.009999999999999998"})
            around(Double.parseDouble(s));
        Random r = new Random(43);
        // Random bits (any exponent; NaNs print as NaN).
        for (int i = 0; i < 1000; i++)
            bits.add(r.nextLong());
        // Log probabilities as the parser prints them: uniform in [-500, 0], and logs of
        // products of small probabilities.
        for (int i = 0; i < 1000; i++)
            add(-500.0 * r.nextDouble());
        for (int i = 0; i < 300; i++) {
            double s = 0;
            for (int k = 1 + r.nextInt(60); k > 0; k--)
                s += Math.log(r.nextDouble());
            add(s);
        }
        // Subnormals: random bits below 2^-1022 and small multiples of the least one.
        for (int i = 0; i < 200; i++)
            bits.add(r.nextLong() & 0x000fffffffffffffL);
        for (long k = 1; k <= 40; k++)
            bits.add(k);
        // Integers (the fast path: exact values up to 2^62) and short decimals.
        for (int i = 0; i < 200; i++) {
            add((double) (r.nextLong() >>> r.nextInt(64)));
            add(r.nextInt(100000) / Math.pow(10, r.nextInt(12)));
            add(Double.parseDouble(r.nextInt(1000000) + "E" + (r.nextInt(80) - 40)));
        }
        for (long b : bits)
            System.out.println(String.format("%016x", b) + "\t" +
                               Double.toString(Double.longBitsToDouble(b)));
    }
}

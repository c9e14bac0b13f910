// The test vectors of util/jmath.c: doubles and the bits of Java 17's Math.log of them, as
// HotSpot computes it on x86_64 (its LIBM stub, StubRoutines::dlog, which the Berkeley
// parser's logs came from). One line per value: the 16 hex digits of its bits, a tab, the
// 16 hex digits of the log's bits. Deterministic (fixed seeds). Run with Java 17 on x86_64:
//     java tools/JLogVectors.java > test/data/jmath_log.tsv   the test vectors (~4,000)
//     java tools/JLogVectors.java random N [SEED]            N random doubles (the bulk check)
//     java tools/JLogVectors.java grammar FILE...            every number of the text files
//                                                            (.gz: the grammars' text export)
// With -Dstrict=true the logs are StrictMath.log's (fdlibm) instead, whose bits differ on
// 2.7% of the test vectors, 1.0% of the random mix (7.3% of uniform doubles in (0, 1)):
// the vectors tell the two apart (`java -XX:+UnlockDiagnosticVMOptions -XX:-UseLibmIntrinsic`,
// which turns the stub off, gives fdlibm's too). tools/check-jlog runs the bulk check
// against build/jlog_check.
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.util.LinkedHashSet;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

public class JLogVectors {
    static final boolean STRICT = Boolean.getBoolean("strict");
    static final OutputStream out = new BufferedOutputStream(System.out, 1 << 16);
    static final byte[] line = new byte[34];

    // Inputs whose Math.log differs from the C library's log (glibc 2.36, x86_64) in the last
    // bit (the first 100 of the bulk check, build/jlog_check --libc): so that the tests show
    // that C's log would fail them.
    static final long[] LIBC_DIFFERS = {
        0x28f07c04b5f25e81L, 0x3ff02dd7ceb94b44L, 0x3fe3f01fa05389cfL, 0x3fef0d20e46f7ddaL,
        0x3fece9a7ccf913abL, 0x3ff0184a7c7ded36L, 0x3fef25f05a4cf405L, 0x3ff06e5ea0459e04L,
        0x3ff039383151b58cL, 0x3fe23dd96709db5dL, 0x3fed3fb940e6bb6aL, 0x3fe2bad0807bbfc7L,
        0x3feaa8837e7c101aL, 0x3ff030f7adc1b745L, 0x3fe83a8a07bb3710L, 0x3ff06be7d808c096L,
        0x3fefe1dac42607eaL, 0x3fe60263e3377207L, 0x3fed6bb6654db65dL, 0x3fe40c7677e49f0aL,
        0x3fed3c2e821a69d5L, 0x3fd8795bc24960e0L, 0x3fe8fe631f209ae3L, 0x3ff0322af1017dc5L,
        0x3fea8561318f0945L, 0x3fe9f85f96bb74ccL, 0x3fe6f3ced90255fdL, 0x3fe7c099c964784cL,
        0x3fc2a3b886d1cf54L, 0x3fef6ee1f6184ea6L, 0x3fefe0599c5bdaaeL, 0x3ff06ddb8348913cL,
        0x3fedf5d2d0546357L, 0x3fe4fa917bbefc52L, 0x3fef9e8fac1846beL, 0x3ff0749435c6d47aL,
        0x3ff056d5f442682dL, 0x3fd82558a766cfe2L, 0x3ff0747cb38a749dL, 0x3feb3b49c0785f66L,
        0x3fe3ff956ae6e04fL, 0x3fe80a980ea989edL, 0x3ff07b5ca5bee081L, 0x3fefd9b7fbb2627fL,
        0x3fd3259f8a4ed8f4L, 0x3fead1aea9175cffL, 0x3fb7ef4f0edb6328L, 0x3fe62547e73d109fL,
        0x3fef7a6703d28c9bL, 0x3fe7a47c16e7967fL, 0x3ff01794ce2257b5L, 0x3fef0ad73225c07fL,
        0x3fed64ba78aaa01cL, 0x3fecf841b1fdf92cL, 0x3fe979d4b8b1ef1fL, 0x3fe0ca2da429114bL,
        0x3fef8f601533fd86L, 0x3ff0483384377bcaL, 0x3fed4337259c1938L, 0x3fe7ab36b2ffac7eL,
        0x3fec60b74d528f48L, 0x3fe136168e324040L, 0x3fe2f8bdd5129865L, 0x3fe505140da2d461L,
        0x3fe4640afde9bf07L, 0x3feccd4faf5937d9L, 0x3ff03cfe71e27d29L, 0x3fe987da36d1788aL,
        0x3fef407698433780L, 0x3fedfe16974bff02L, 0x3ff04c89da93e0baL, 0x3ff0485da3416ba1L,
        0x3ff01ebfce9632aaL, 0x3fefe5703cbc1ad1L, 0x3fef30bd0a036107L, 0x3ff0318146b3a7efL,
        0x3fe2688cfe3d0d42L, 0x3fd9a6fdd86ff998L, 0x3ff04e7e52fffe30L, 0x3fedeae06b7fb945L,
        0x3fee21abc2a5b762L, 0x3feae27178f40af0L, 0x3ff0695c55083fc5L, 0x3fed0578e59ee10cL,
        0x3fecc69495c9f148L, 0x3fef1dd282946146L, 0x3fef441d17f2c923L, 0x3ff07e131cbe11dbL,
        0x3fe5d24f38a8a739L, 0x3fed4830d4bd87e2L, 0x3fefc35656b08aeaL, 0x3fd40595c8fbdd82L,
        0x3fecf1190f81d716L, 0x3feca19cc30cef76L, 0x3fefe713b9f7caf1L, 0x450a9e6e3aefd1f6L,
        0x3fefba1bd1b200bcL, 0x3fe59e812dc2f2deL, 0x3fd836ca01a2fbc4L, 0x3fe8a4884ef20a7bL,
    };

    // Inputs whose log on an Intel processor differs in the last bit from the AMD one's
    // (their RCPPS differ; util/jmath.c), found with jmath_log_cpu: 25 of 60 million in [0.5, 1).
    static final long[] INTEL_DIFFERS = {
        0x3fe269f7988830eeL, 0x3fedcb5d76802386L, 0x3feeeab67bc865ceL, 0x3feeeaf8190c7521L,
        0x3fee3b9acc8bc466L, 0x3fedcbcf4a2d50a5L, 0x3fed9320dd32d798L, 0x3fed932e2c04078bL,
        0x3fedcb78c48c5a5bL, 0x3feeeaef7de315e9L, 0x3fecf343c812456cL, 0x3fedcbf2e0112e05L,
        0x3fef26c4138cbf75L, 0x3fef2675091a3ed2L, 0x3fee3b9bdccf57eaL, 0x3fecf30c825d2f9cL,
    };

    static double log(double x) { return STRICT ? StrictMath.log(x) : Math.log(x); }

    static void hex(long v, int at) {
        for (int i = 15; i >= 0; i--, v >>>= 4)
            line[at + i] = (byte) "0123456789abcdef".charAt((int) (v & 15));
    }

    static void print(double x) throws IOException {
        hex(Double.doubleToRawLongBits(x), 0);
        line[16] = '\t';
        hex(Double.doubleToRawLongBits(log(x)), 17);
        line[33] = '\n';
        out.write(line);
    }

    // A double of random bits, uniform over the positive exponents, in (0, 1), near 1,
    // subnormal, a probability between 1e-30 and 1 (log-uniform), or of any sign.
    static double random(Random r) {
        switch (r.nextInt(8)) {
        case 0: case 1: return Double.longBitsToDouble(r.nextLong() >>> 1);
        case 2: return Double.longBitsToDouble(((long) (r.nextInt(2046) + 1) << 52) |
                                               (r.nextLong() >>> 12));
        case 3: return r.nextDouble();
        case 4: return 1.0 + (r.nextDouble() - 0.5) / 16;
        case 5: return Double.longBitsToDouble(r.nextLong() >>> 12);
        case 6: return Math.exp(-69.1 * r.nextDouble());
        default: return Double.longBitsToDouble(r.nextLong());
        }
    }

    static final LinkedHashSet<Long> bits = new LinkedHashSet<>();

    static void add(double d) { bits.add(Double.doubleToRawLongBits(d)); }

    static void neighbours(double d) {
        add(d);
        add(Math.nextUp(d));
        add(Math.nextDown(d));
    }

    static void vectors() throws IOException {
        // The special cases and the ends of the range.
        for (double d : new double[] {0.0, -0.0, 1.0, -1.0, Double.POSITIVE_INFINITY,
                                      Double.NEGATIVE_INFINITY, Double.NaN, Double.MAX_VALUE,
                                      -Double.MAX_VALUE, Double.MIN_VALUE, -Double.MIN_VALUE,
                                      Double.MIN_NORMAL, 2.0, 0.5, Math.E, 10.0, 0.1})
            neighbours(d);
        for (long b : new long[] {0x7ff0000000000001L, 0x7ff4000000000000L, 0x7fffffffffffffffL,
                                  0xfff8000000000000L, 0xfff0000000000001L, 0xfff8000000000123L,
                                  0x7ff8000000000123L, 0x000fffffffffffffL, 0x800fffffffffffffL,
                                  0x0000000000000002L, 0x0000000100000000L, 0x3ff0000000000001L})
            bits.add(b);
        // Every third power of two; every 16th exponent's neighbours.
        for (int e = -1074; e <= 1023; e++)
            if (e % 16 == 0)
                neighbours(Math.scalb(1.0, e));
            else if (e % 3 == 0)
                add(Math.scalb(1.0, e));
        // Subnormals of each bit length.
        for (int k = 0; k < 52; k++) {
            add(Double.longBitsToDouble(1L << k));
            add(Double.longBitsToDouble((1L << (k + 1)) - 1));
        }
        // Near 1, where the log is small: 1 +- 2^-k and their neighbours.
        for (int k = 1; k <= 53; k++) {
            neighbours(1.0 + Math.scalb(1.0, -k));
            neighbours(1.0 - Math.scalb(1.0, -k));
        }
        for (long b : LIBC_DIFFERS)
            bits.add(b);
        for (long b : INTEL_DIFFERS)
            bits.add(b);
        Random r = new Random(20261202);
        // Every 16th 12-bit mantissa prefix (the stub's table index comes from it), alone and
        // with random low bits, at one of three exponents.
        for (int k = 0; k < 4096; k += 16) {
            long e = new long[] {1022, 1023, 1000}[k / 16 % 3], m = (long) k << 40;
            bits.add((e << 52) | m);
            bits.add((e << 52) | m | (r.nextLong() >>> 24));
        }
        // Random doubles of every kind.
        for (int i = 0; i < 2000; i++)
            add(random(r));
        for (long b : bits)
            print(Double.longBitsToDouble(b));
    }

    static void grammar(String[] files) throws IOException {
        Pattern num = Pattern.compile("-?\\d+\\.\\d+(E-?\\d+)?");
        LinkedHashSet<Long> seen = new LinkedHashSet<>();
        for (String f : files) {
            InputStream in = new FileInputStream(f);
            if (f.endsWith(".gz"))
                in = new GZIPInputStream(in, 1 << 16);
            try (BufferedReader rd = new BufferedReader(new InputStreamReader(in, "UTF-8"))) {
                for (String s; (s = rd.readLine()) != null;) {
                    Matcher m = num.matcher(s);
                    while (m.find()) {
                        double x = Double.parseDouble(m.group());
                        if (seen.add(Double.doubleToRawLongBits(x)))
                            print(x);
                    }
                }
            }
        }
    }

    public static void main(String[] args) throws IOException {
        if (!System.getProperty("java.specification.version").equals("17") ||
            !System.getProperty("os.arch").equals("amd64"))
            throw new IllegalStateException("run with Java 17 on x86_64, not " +
                                            System.getProperty("java.version") + " on " +
                                            System.getProperty("os.arch"));
        if (args.length == 0) {
            vectors();
        } else if (args[0].equals("random") && (args.length == 2 || args.length == 3)) {
            long n = Long.parseLong(args[1]);
            Random r = new Random(args.length == 3 ? Long.parseLong(args[2]) : 1);
            for (long i = 0; i < n; i++)
                print(random(r));
        } else if (args[0].equals("grammar") && args.length > 1) {
            grammar(java.util.Arrays.copyOfRange(args, 1, args.length));
        } else {
            System.err.println("usage: java JLogVectors.java [random N [SEED] | grammar FILE...]");
            System.exit(2);
        }
        out.flush();
    }
}

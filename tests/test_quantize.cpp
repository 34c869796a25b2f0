// Weight-only quantisation on the CPU: fp16 rounding, INT8 per-row and INT4 group-wise
// quantisation (error bounds, exact values and packing on hand-checkable rows, padding, zero rows,
// negative extremes), dequantisation and the reference product.

#include <QTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/model/dtype.h"
#include "mtdesk/quant/quantize.h"

using namespace mtdesk;

namespace {

std::vector<float> random_weights(int n, int k, uint32_t seed, float spread = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.02f * spread);
    std::vector<float> w(static_cast<std::size_t>(n) * k);
    for (float& v : w)
        v = dist(rng);
    // A few outliers, as real checkpoints have.
    for (std::size_t i = 0; i < w.size(); i += 97)
        w[i] *= 8.0f;
    return w;
}

// The INT8 scale by the definition: max|w_row| / 127 rounded up to the next fp16 value.
float expected_scale(float amax, float qmax) {
    return amax == 0.0f ? 0.0f : fp16_round_up(amax / qmax);
}

// |w - deq| <= scale / 2, with room for the rounding of w / scale in fp32.
bool within_half_step(float w, float deq, float scale) {
    return std::fabs(w - deq) <= 0.5f * scale * (1.0f + 1e-6f) + 1e-30f;
}

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT

  private slots:
    // Every finite fp16 value converts to fp32 and back unchanged; midpoints between neighbours
    // round to the even one; values past 65520 become infinity.
    void fp16Conversion() {
        for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
            const uint16_t h = static_cast<uint16_t>(bits);
            if ((h & 0x7c00u) == 0x7c00u) continue;  // inf / NaN
            QCOMPARE(fp32_to_fp16_bits(fp16_to_fp32(h)), h);
        }
        for (uint16_t h = 0; h < 0x7bffu; ++h) {  // positive finite neighbours h, h + 1
            const float lo = fp16_to_fp32(h), hi = fp16_to_fp32(h + 1);
            const float mid = lo + (hi - lo) / 2;  // exact in fp32
            const uint16_t even = (h % 2 == 0) ? h : static_cast<uint16_t>(h + 1);
            QCOMPARE(fp32_to_fp16_bits(mid), even);
            QCOMPARE(fp32_to_fp16_bits(-mid), static_cast<uint16_t>(even | 0x8000u));
            QCOMPARE(fp16_round_up(std::nextafter(lo, hi)), hi);
            QCOMPARE(fp16_round_up(lo), lo);
        }
        QCOMPARE(fp32_to_fp16_bits(65519.0f), uint16_t(0x7bff));
        QCOMPARE(fp32_to_fp16_bits(65520.0f), uint16_t(0x7c00));
        QCOMPARE(fp32_to_fp16_bits(1e-9f), uint16_t(0));  // below half the smallest subnormal
        QVERIFY(std::isnan(fp16_to_fp32(fp32_to_fp16_bits(NAN))));
        QVERIFY_THROWS_EXCEPTION(Error, fp16_round_up(70000.0f));
        QVERIFY_THROWS_EXCEPTION(Error, fp16_round_up(-1.0f));
    }

    // Row 0: max 127 -> scale 1; -63.5 and 0.5 are ties and go to the even neighbour.
    // Row 1: the largest magnitude is negative (-254 -> scale 2, q -127); 1 and 3 are ties
    // (0.5 -> 0, 1.5 -> 2). Row 2: all zero -> scale 0, q 0.
    void int8HandCheckedRows() {
        const std::vector<float> w = {127.0f,  -63.5f, 0.5f, -127.0f,  //
                                      -254.0f, 1.0f,   3.0f, 100.0f,   //
                                      0.0f,    0.0f,   0.0f, 0.0f};
        const QuantizedInt8 q = quantize_int8(w, 3, 4);
        QCOMPARE(q.n, 3);
        QCOMPARE(q.k, 4);
        QCOMPARE(q.scales, (std::vector<float>{1.0f, 2.0f, 0.0f}));
        const std::vector<int8_t> expect = {127, -64, 0, -127, -127, 0, 2, 50, 0, 0, 0, 0};
        QCOMPARE(q.q, expect);
        const std::vector<float> deq = dequantize(q);
        for (std::size_t i = 0; i < w.size(); ++i)
            QCOMPARE(deq[i], static_cast<float>(expect[i]) * q.scales[i / 4]);
    }

    // Random rows of different magnitudes: the scale is the definition's, |q| <= 127, some
    // element reaches ±127, and every element is within half a step of the original.
    void int8RoundTripBound() {
        const int n = 37, k = 300;
        for (float spread : {1e-4f, 1.0f, 300.0f}) {
            const std::vector<float> w = random_weights(n, k, 7, spread);
            const QuantizedInt8 q = quantize_int8(w, n, k);
            const std::vector<float> deq = dequantize(q);
            for (int r = 0; r < n; ++r) {
                float amax = 0;
                int qmax = 0;
                for (int c = 0; c < k; ++c) {
                    const std::size_t i = static_cast<std::size_t>(r) * k + c;
                    amax = std::max(amax, std::fabs(w[i]));
                    QVERIFY(q.q[i] != -128);  // the symmetric range [-127, 127]
                    qmax = std::max(qmax, std::abs(int(q.q[i])));
                    QVERIFY2(within_half_step(w[i], deq[i], q.scales[r]),
                             qPrintable(QString("r %1 c %2: %3 vs %4, scale %5")
                                            .arg(r)
                                            .arg(c)
                                            .arg(w[i])
                                            .arg(deq[i])
                                            .arg(q.scales[r])));
                }
                QCOMPARE(q.scales[r], expected_scale(amax, 127.0f));
                QVERIFY(q.scales[r] >= amax / 127.0f);
                // A normal fp16 scale is rounded up by at most 2^-10: the largest value stays
                // near 127 (subnormal scales are coarser).
                if (q.scales[r] >= 6.103515625e-05f) QVERIFY(qmax >= 126);
            }
        }
    }

    // Packing of one row of k = 4 (group 128, so padded to 128): values 7, -7, 3, -1 with
    // scale 1, two per byte, element 2j in the low nibble, two's complement.
    void int4PackingByHand() {
        const std::vector<float> w = {7.0f, -7.0f, 3.0f, -1.0f};
        const QuantizedInt4 q = quantize_int4(w, 1, 4);
        QCOMPARE(q.k_padded, 128);
        QCOMPARE(q.groups(), 1);
        QCOMPARE(q.packed.size(), std::size_t(64));
        QCOMPARE(q.scales, std::vector<float>{1.0f});
        auto nibble = [](int v) { return static_cast<uint8_t>(v & 0x0F); };
        QCOMPARE(q.packed[0], static_cast<uint8_t>(nibble(7) | nibble(-7) << 4));  // 0x97
        QCOMPARE(q.packed[1], static_cast<uint8_t>(nibble(3) | nibble(-1) << 4));  // 0xF3
        for (std::size_t j = 2; j < q.packed.size(); ++j)
            QCOMPARE(q.packed[j], uint8_t(0));
        QCOMPARE(q.q(0, 0), 7);
        QCOMPARE(q.q(0, 1), -7);
        QCOMPARE(q.q(0, 3), -1);
    }

    // Ties round to even on the int4 grid too; the negative extreme maps to -7, never -8.
    void int4TiesAndNegativeExtreme() {
        const std::vector<float> w = {3.5f, -3.5f, 2.5f, -14.0f, 0.5f, 1.75f};
        const QuantizedInt4 q = quantize_int4(w, 1, 6, 2);  // groups of 2
        QCOMPARE(q.k_padded, 6);
        QCOMPARE(q.scales, (std::vector<float>{0.5f, 2.0f, 0.25f}));
        // 3.5/0.5 = 7, -3.5/0.5 = -7, 2.5/2 = 1.25 -> 1, -14/2 = -7, 0.5/0.25 = 2, 1.75/0.25 = 7
        const std::vector<int> expect = {7, -7, 1, -7, 2, 7};
        for (int c = 0; c < 6; ++c)
            QCOMPARE(q.q(0, c), expect[c]);
        const std::vector<float> w2 = {-7.0f, 3.5f, 2.5f, 0.5f};  // scale 1: ties 3.5->4 2.5->2
        const QuantizedInt4 q2 = quantize_int4(w2, 1, 4);
        const std::vector<int> expect2 = {-7, 4, 2, 0};
        for (int c = 0; c < 4; ++c)
            QCOMPARE(q2.q(0, c), expect2[c]);
        QCOMPARE(q2.packed[0], static_cast<uint8_t>((-7 & 0x0F) | (4 << 4)));
    }

    // k not a multiple of the group (200, 1, 3): padding is zero, scales come from the real
    // elements only, odd k leaves the last high nibble empty, and the round trip holds.
    void int4PaddingAndBounds() {
        for (int k : {200, 1, 3, 128, 129, 255}) {
            const int n = 5;
            const std::vector<float> w = random_weights(n, k, 11 + k);
            const QuantizedInt4 q = quantize_int4(w, n, k);
            QCOMPARE(q.k_padded, (k + 127) / 128 * 128);
            QCOMPARE(q.packed.size(), std::size_t(n) * q.k_padded / 2);
            QCOMPARE(q.scales.size(), std::size_t(n) * q.groups());
            const std::vector<float> deq = dequantize(q);
            QCOMPARE(deq.size(), w.size());
            for (int r = 0; r < n; ++r) {
                for (int g = 0; g < q.groups(); ++g) {
                    float amax = 0;
                    for (int c = g * 128; c < std::min(k, (g + 1) * 128); ++c)
                        amax = std::max(amax, std::fabs(w[std::size_t(r) * k + c]));
                    QCOMPARE(q.scales[std::size_t(r) * q.groups() + g], expected_scale(amax, 7));
                }
                for (int c = 0; c < k; ++c) {
                    const std::size_t i = std::size_t(r) * k + c;
                    QVERIFY(q.q(r, c) >= -7 && q.q(r, c) <= 7);
                    QVERIFY(within_half_step(w[i], deq[i], q.scales[r * q.groups() + c / 128]));
                }
                for (int c = k; c < q.k_padded; ++c)
                    QCOMPARE(q.q(r, c), 0);
            }
        }
    }

    // All-zero rows and groups: scale 0, q 0, exact zeros back; neighbours unaffected.
    void zeroRowsAndGroups() {
        const int n = 3, k = 256;
        std::vector<float> w = random_weights(n, k, 3);
        for (int c = 0; c < k; ++c)
            w[std::size_t(1) * k + c] = 0.0f;  // row 1
        for (int c = 128; c < 256; ++c)
            w[std::size_t(2) * k + c] = 0.0f;  // row 2, group 1
        const QuantizedInt8 q8 = quantize_int8(w, n, k);
        QCOMPARE(q8.scales[1], 0.0f);
        QVERIFY(q8.scales[0] > 0 && q8.scales[2] > 0);
        const QuantizedInt4 q4 = quantize_int4(w, n, k);
        QCOMPARE(q4.scales[2], 0.0f);  // row 1, group 0
        QCOMPARE(q4.scales[3], 0.0f);  // row 1, group 1
        QCOMPARE(q4.scales[5], 0.0f);  // row 2, group 1
        QVERIFY(q4.scales[4] > 0);
        const std::vector<float> d8 = dequantize(q8), d4 = dequantize(q4);
        for (int c = 0; c < k; ++c) {
            QCOMPARE(q8.q[std::size_t(k) + c], int8_t(0));
            QCOMPARE(d8[std::size_t(k) + c], 0.0f);
            QCOMPARE(d4[std::size_t(k) + c], 0.0f);
        }
        for (int c = 128; c < 256; ++c)
            QCOMPARE(d4[std::size_t(2) * k + c], 0.0f);
    }

    // Tiny magnitudes give fp16 subnormal scales, rounded up, never 0: the bound still holds.
    void subnormalScales() {
        const std::vector<float> w = {1e-7f, -3e-8f, 2e-9f, 0.0f};
        const QuantizedInt8 q8 = quantize_int8(w, 1, 4);
        QVERIFY(q8.scales[0] > 0.0f && q8.scales[0] < 6.2e-5f);
        const QuantizedInt4 q4 = quantize_int4(w, 1, 4);
        QVERIFY(q4.scales[0] > 0.0f);
        const std::vector<float> d8 = dequantize(q8), d4 = dequantize(q4);
        for (int c = 0; c < 4; ++c) {
            QVERIFY(within_half_step(w[c], d8[c], q8.scales[0]));
            QVERIFY(within_half_step(w[c], d4[c], q4.scales[0]));
        }
    }

    // The quantised product differs from the float product by at most
    // sum_k |x_k| · (scale of w[n][k]) / 2, and matches a direct product of the dequantised W.
    void linearReferenceWithinBound() {
        const int m = 3, n = 17, k = 200;
        const std::vector<float> w = random_weights(n, k, 5);
        std::vector<float> x(static_cast<std::size_t>(m) * k);
        std::mt19937 rng(9);
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        for (float& v : x)
            v = u(rng);
        const std::vector<float> exact = linear_reference_dense(w, n, k, x, m);
        const QuantizedInt8 q8 = quantize_int8(w, n, k);
        const QuantizedInt4 q4 = quantize_int4(w, n, k);
        const std::vector<float> y8 = linear_reference(QuantizedTensor(q8), x, m);
        const std::vector<float> y4 = linear_reference(QuantizedTensor(q4), x, m);
        const std::vector<float> d8 = dequantize(q8), d4 = dequantize(q4);
        double worst4 = 0;
        for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j) {
                double bound8 = 0, bound4 = 0, direct8 = 0, direct4 = 0;
                for (int c = 0; c < k; ++c) {
                    const double xv = x[std::size_t(i) * k + c];
                    bound8 += std::fabs(xv) * q8.scales[j] / 2;
                    bound4 += std::fabs(xv) * q4.scales[std::size_t(j) * q4.groups() + c / 128] / 2;
                    direct8 += xv * d8[std::size_t(j) * k + c];
                    direct4 += xv * d4[std::size_t(j) * k + c];
                }
                const std::size_t o = std::size_t(i) * n + j;
                QVERIFY(std::fabs(y8[o] - exact[o]) <= bound8 * 1.0001 + 1e-6);
                QVERIFY(std::fabs(y4[o] - exact[o]) <= bound4 * 1.0001 + 1e-6);
                QVERIFY(std::fabs(y8[o] - direct8) <= 1e-5 * (1 + std::fabs(direct8)));
                QVERIFY(std::fabs(y4[o] - direct4) <= 1e-5 * (1 + std::fabs(direct4)));
                worst4 = std::max(worst4, std::fabs(double(y4[o]) - exact[o]));
            }
        }
        QVERIFY(worst4 > 0);  // INT4 does change the result: the comparison is not vacuous
        // m = 0 is an empty product; wrong sizes are refused.
        QVERIFY(linear_reference(QuantizedTensor(q8), {}, 0).empty());
        std::vector<float> y(n);
        QVERIFY_THROWS_EXCEPTION(Error, linear_reference(q8, std::span(x).first(k - 1), 1, y));
    }

    void badInputsThrow() {
        std::vector<float> w(8, 1.0f);
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int8(w, 3, 3));  // 8 values for [3, 3]
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int8(w, 0, 8));
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int4(w, 2, 4, 3));  // odd group
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int4(w, 2, 4, 0));
        w[5] = NAN;
        try {
            quantize_int8(w, 2, 4);
            QFAIL("NaN accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("(1, 1)"), e.what());  // names row and column
        }
        w[5] = INFINITY;
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int4(w, 2, 4));
        w[5] = 1e8f;  // 1e8 / 127 is past the fp16 range
        QVERIFY_THROWS_EXCEPTION(Error, quantize_int8(w, 2, 4));
    }

    void validateCatchesBrokenTensors() {
        const std::vector<float> w = random_weights(4, 130, 1);
        QuantizedInt8 q8 = quantize_int8(w, 4, 130);
        validate(q8);
        q8.q[3] = -128;
        QVERIFY_THROWS_EXCEPTION(Error, validate(q8));
        q8 = quantize_int8(w, 4, 130);
        q8.scales[1] = 0.1f;  // not an fp16 value
        QVERIFY_THROWS_EXCEPTION(Error, validate(q8));
        q8.scales.pop_back();
        QVERIFY_THROWS_EXCEPTION(Error, validate(q8));
        QuantizedInt4 q4 = quantize_int4(w, 4, 130);
        validate(q4);
        q4.k_padded = 130;
        QVERIFY_THROWS_EXCEPTION(Error, validate(q4));
        q4 = quantize_int4(w, 4, 130);
        q4.packed.pop_back();
        QVERIFY_THROWS_EXCEPTION(Error, validate(QuantizedTensor(q4)));
    }
};

QTEST_APPLESS_MAIN(TestQuantize)
#include "test_quantize.moc"

// The correction for OpenBLAS's kernel choice on VMs that hide the CPU model.

#include <QTest>

#include <cstdlib>
#include <set>
#include <string>

#include "mtdesk/cpu/blas_kernels.h"

using namespace mtdesk;

class TestBlasKernels : public QObject {
    Q_OBJECT

  private slots:
    void coreName() { QVERIFY(!blas_core_name().empty()); }

    // A suggestion is only made for a generic fallback on a CPU that can do better.
    void suggestionOnlyForFallbacks() {
        unsetenv("OPENBLAS_CORETYPE");
        const auto better = better_blas_coretype();
        const std::set<std::string> fallbacks{"Prescott", "Core2", "Nehalem", "Penryn"};
        if (!better) {
            QVERIFY(!fallbacks.count(blas_core_name()) || !__builtin_cpu_supports("avx2"));
            return;
        }
        QVERIFY2(fallbacks.count(blas_core_name()), blas_core_name().c_str());
        QVERIFY(*better == "Haswell" || *better == "SkylakeX");
        QVERIFY(__builtin_cpu_supports("avx2"));
        if (*better == "SkylakeX") QVERIFY(__builtin_cpu_supports("avx512f"));
    }

    // The user's own OPENBLAS_CORETYPE is never second-guessed.
    void userChoiceStands() {
        setenv("OPENBLAS_CORETYPE", "Prescott", 1);
        QVERIFY(!better_blas_coretype());
        unsetenv("OPENBLAS_CORETYPE");
    }
};

QTEST_APPLESS_MAIN(TestBlasKernels)
#include "test_blas_kernels.moc"

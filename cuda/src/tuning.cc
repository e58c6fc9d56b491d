// The layout variant of tuning.h: one process-wide value read by the launchers.
#include "lowbit/cuda/tuning.h"

namespace lowbit::cuda {
namespace {
int g_variant = 0;
}  // namespace

void SetLayoutVariant(int variant) { g_variant = variant; }
int LayoutVariant() { return g_variant; }

}  // namespace lowbit::cuda

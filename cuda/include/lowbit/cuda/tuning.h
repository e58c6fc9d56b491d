// Kernel layout variants, for measuring a change against the layout it
// replaced in one benchmark run (METHOD.md: before and after in the same
// run). 0, the default, is the layout chosen by the last measurement
// (bench/RESULTS.md "CUDA"); 1 is the layout it replaced; 2 is the flat
// layouts with the streaming hints (ld.global.nc.L1::no_allocate,
// st.global.cs) that 0 no longer uses. Not thread-safe:
// set it before launching, from one thread.
#pragma once

namespace lowbit::cuda {

void SetLayoutVariant(int variant);
int LayoutVariant();

}  // namespace lowbit::cuda

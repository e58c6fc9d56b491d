// lowbit::testing in one include: the value, block and matrix generators
// (RapidCheck), the boundary classes they aim at, and the GoogleTest
// assertions over lowbit::check's report. See examples/check-a-kernel/ for a
// user's kernel tested with it through find_package(lowbit).
#pragma once

#include "lowbit/testing/block_generators.h"
#include "lowbit/testing/boundary_classes.h"
#include "lowbit/testing/matchers.h"
#include "lowbit/testing/property.h"
#include "lowbit/testing/value_generators.h"

// LOWBIT_UNDER_SANITIZER: defined when this test is built with
// AddressSanitizer, ThreadSanitizer or MemorySanitizer (scripts/sanitize.sh
// builds every C++ test with ASan + UBSan). GCC says so with
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang with __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOWBIT_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LOWBIT_UNDER_SANITIZER 1
#endif
#endif

// Atomic access to one machine word (relaxed, acquire and release), for the few places where Katana needs an
// atomic without Swift's `Synchronization` module (which requires macOS 15 / iOS 18); the continuous clock read
// as nanoseconds, and the processor's counter, for the recorder; and, on Apple platforms, the calling task's Mach
// port for katana-benchmarks. Everything is `static inline`, so the package ships no compiled C code of its own.

#ifndef CKATANA_H
#define CKATANA_H

#include <stdbool.h>
#include <stdint.h>

/// Loads `*word` atomically, with relaxed ordering.
static inline uintptr_t ckatana_load_relaxed(const uintptr_t *word) {
  return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/// Stores `value` into `*word` atomically, with relaxed ordering.
static inline void ckatana_store_relaxed(uintptr_t *word, uintptr_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

/// Loads `*word` atomically, with acquire ordering.
static inline uintptr_t ckatana_load_acquire(const uintptr_t *word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores `value` into `*word` atomically, with release ordering.
static inline void ckatana_store_release(uintptr_t *word, uintptr_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Replaces `*word` with `desired` atomically if it is `expected` (acquire-release ordering on success, acquire on
/// failure); returns whether it did.
static inline bool ckatana_compare_exchange(uintptr_t *word, uintptr_t expected, uintptr_t desired) {
  return __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

#include <time.h>

/// The time on the clock Swift's `ContinuousClock` reads (it goes on while the machine sleeps), in nanoseconds since
/// an arbitrary start: what a recorder stamps each commit with, read without building a `ContinuousClock.Instant`.
static inline int64_t ckatana_continuous_nanoseconds(void) {
  struct timespec now;
#if defined(__APPLE__)
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
#elif defined(CLOCK_BOOTTIME)
  clock_gettime(CLOCK_BOOTTIME, &now);
#else
  clock_gettime(CLOCK_MONOTONIC, &now);
#endif
  return (int64_t)now.tv_sec * 1000000000 + (int64_t)now.tv_nsec;
}

/// The processor's own counter, read without ordering or a system call: the time-stamp counter on x86-64, the
/// virtual counter on arm64 (0 elsewhere, where Katana does not read it). It counts at a rate of its own, from a start
/// of its own; a recorder turns it into the continuous clock's nanoseconds by anchoring it to that clock
/// (`CounterClock`), and reads it only on Linux, where the continuous clock costs about 2.5 times as much.
static inline int64_t ckatana_counter_ticks(void) {
#if defined(__x86_64__)
  return (int64_t)__builtin_ia32_rdtsc();
#elif defined(__aarch64__)
  uint64_t ticks;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(ticks));
  return (int64_t)ticks;
#else
  return 0;
#endif
}

#ifdef __APPLE__
#include <mach/mach.h>

/// The Mach port of the calling task: `mach_task_self()`, read in C. In Swift 6 mode, SDKs that declare
/// `mach_task_self_` as a plain mutable global (up to at least macOS 15.2's) make Swift reject reading it
/// ("not concurrency-safe because it involves shared mutable state"); it is set once, before `main`.
static inline mach_port_t ckatana_mach_task_self(void) {
  return mach_task_self();
}
#endif

#endif

// Atomic access to one machine word (relaxed, acquire and release), for the few places where Katana needs an
// atomic without Swift's `Synchronization` module (which requires macOS 15 / iOS 18). Everything is
// `static inline`, so the package ships no compiled C code of its own.

#ifndef CKATANA_H
#define CKATANA_H

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

#endif

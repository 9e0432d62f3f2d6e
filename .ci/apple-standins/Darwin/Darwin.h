// Stand-in for the Apple SDK's Darwin module, for .ci/check-apple-branches: exactly the C declarations that
// the package's Apple-only branches use, as the Apple SDK headers declare them, so that Swift imports them with
// the same types, nullability and attributes; where SDKs differ, the stricter declaration (`mach_task_self_`).
// Each declaration quotes the SDK header it mirrors. Never used by a real build: on Apple platforms the SDK's
// own Darwin is found.
//
// What differs from glibc, and what the package's `#if canImport(Darwin)` branches are written for:
// - `pthread_t` is a pointer (glibc: an integer), so `pthread_self()` converts with `UInt(bitPattern:)`;
// - the headers are in assume-nonnull regions, so a `pthread_key_create` destructor receives a non-optional
//   pointer (glibc: an optional one);
// - `mach_task_self_` is a mutable global variable: Swift 6 rejects reading it outside a C function;
// - `os_unfair_lock` exists, and locking it is unavailable from async code.

#ifndef KATANA_STANDIN_DARWIN_H
#define KATANA_STANDIN_DARWIN_H

#include <mach/mach.h>

typedef __SIZE_TYPE__ size_t;
// <sys/_types.h>: typedef long __darwin_ssize_t; <sys/_types/_ssize_t.h>: typedef __darwin_ssize_t ssize_t;
typedef long ssize_t;

// <unistd.h> (no nullability annotations, so the buffer imports as implicitly unwrapped):
// ssize_t write(int __fd, const void * __buf, size_t __nbyte) __DARWIN_ALIAS_C(write);
ssize_t write(int __fd, const void *__buf, size_t __nbyte);

#pragma clang assume_nonnull begin

// <sys/_pthread/_pthread_types.h>: struct _opaque_pthread_t { long __sig; ...; char __opaque[8176]; };
// typedef struct _opaque_pthread_t *__darwin_pthread_t;
struct _opaque_pthread_t {
  long __sig;
  char __opaque[8176];
};
// <sys/_pthread/_pthread_t.h>: typedef __darwin_pthread_t pthread_t;
typedef struct _opaque_pthread_t *pthread_t;
// <sys/_pthread/_pthread_key_t.h>: typedef __darwin_pthread_key_t pthread_key_t; (unsigned long)
typedef unsigned long pthread_key_t;

// <pthread/pthread.h>, inside __BEGIN_DECLS / _Pragma("clang assume_nonnull begin"):
// pthread_t pthread_self(void);
pthread_t pthread_self(void);
// int pthread_key_create(pthread_key_t *, void (* _Nullable)(void *));
int pthread_key_create(pthread_key_t *, void (*_Nullable)(void *));
// void* _Nullable pthread_getspecific(pthread_key_t);
void *_Nullable pthread_getspecific(pthread_key_t);
// int pthread_setspecific(pthread_key_t , const void * _Nullable);
int pthread_setspecific(pthread_key_t, const void *_Nullable);
// size_t pthread_get_stacksize_np(pthread_t);
size_t pthread_get_stacksize_np(pthread_t);

// <os/lock.h>, inside OS_ASSUME_NONNULL_BEGIN:
// typedef struct os_unfair_lock_s { uint32_t _os_unfair_lock_opaque; } os_unfair_lock, *os_unfair_lock_t;
typedef struct os_unfair_lock_s {
  unsigned int _os_unfair_lock_opaque;
} os_unfair_lock, *os_unfair_lock_t;
// OS_UNFAIR_LOCK_AVAILABILITY OS_EXPORT OS_NOTHROW OS_NONNULL_ALL
// OS_SWIFT_UNAVAILABLE_FROM_ASYNC("Use OSAllocatedUnfairLock's withLock or NSLock for async-safe scoped locking")
// void os_unfair_lock_lock(os_unfair_lock_t lock);
__attribute__((__swift_attr__(
    "@_unavailableFromAsync(message: \"Use OSAllocatedUnfairLock's withLock or NSLock for async-safe scoped locking\")")))
void os_unfair_lock_lock(os_unfair_lock_t lock);
// OS_UNFAIR_LOCK_AVAILABILITY OS_EXPORT OS_NOTHROW OS_NONNULL_ALL
// OS_SWIFT_UNAVAILABLE_FROM_ASYNC("Use OSAllocatedUnfairLock's withLock or NSLock for async-safe scoped locking")
// void os_unfair_lock_unlock(os_unfair_lock_t lock);
__attribute__((__swift_attr__(
    "@_unavailableFromAsync(message: \"Use OSAllocatedUnfairLock's withLock or NSLock for async-safe scoped locking\")")))
void os_unfair_lock_unlock(os_unfair_lock_t lock);

#pragma clang assume_nonnull end

#endif

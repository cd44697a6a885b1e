// Clang thread-safety annotations (-Wthread-safety), prefixed SLUICE_ so that
// they never clash with another library's (Abseil's ABSL_GUARDED_BY, ...).
// They expand to nothing on other compilers, so GCC builds see plain code. See
// https://clang.llvm.org/docs/ThreadSafetyAnalysis.html for their meaning.
#ifndef SLUICE_CORE_THREAD_ANNOTATIONS_H_
#define SLUICE_CORE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define SLUICE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SLUICE_THREAD_ANNOTATION(x)
#endif

#define SLUICE_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(capability(x))
#define SLUICE_SCOPED_CAPABILITY SLUICE_THREAD_ANNOTATION(scoped_lockable)
#define SLUICE_GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(guarded_by(x))
#define SLUICE_PT_GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(pt_guarded_by(x))
#define SLUICE_ACQUIRED_BEFORE(...) SLUICE_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define SLUICE_ACQUIRED_AFTER(...) SLUICE_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define SLUICE_REQUIRES(...) SLUICE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SLUICE_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SLUICE_RELEASE(...) SLUICE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SLUICE_TRY_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define SLUICE_EXCLUDES(...) SLUICE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define SLUICE_ASSERT_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(assert_capability(x))
#define SLUICE_RETURN_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(lock_returned(x))
#define SLUICE_NO_THREAD_SAFETY_ANALYSIS SLUICE_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // SLUICE_CORE_THREAD_ANNOTATIONS_H_

/* shape/export.h — what libshape exports, and how a header says so.
 *
 * libshape is compiled with -fvisibility=hidden: a function or variable is
 * part of the library's ABI only when a public header (include/shape/)
 * declares it. Each public header marks its declarations: SHAPE_API_BEGIN
 * after its include guard and this include, SHAPE_API_END just before the
 * guard's #endif; a single declaration elsewhere can carry SHAPE_API.
 * Declarations in private headers (under src/) stay inside the library:
 * tests that need them link the static shape_static (tests/unit/
 * CMakeLists.txt), not the shared library. tests/contract/
 * test_public_headers.sh checks that every public header is marked this way
 * and that libshape exports nothing a public header does not name.
 */
#ifndef SHAPE_EXPORT_H
#define SHAPE_EXPORT_H

#if defined(__GNUC__)
#define SHAPE_API __attribute__((visibility("default")))
#define SHAPE_API_BEGIN _Pragma("GCC visibility push(default)")
#define SHAPE_API_END _Pragma("GCC visibility pop")
#else
#define SHAPE_API
#define SHAPE_API_BEGIN
#define SHAPE_API_END
#endif

#endif

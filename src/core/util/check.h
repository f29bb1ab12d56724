// PT2LAB_CHECK: an always-on assertion for pt2lab's own invariants (never for
// user data, which gets an Error value). Unlike assert(), it stays in every
// build, the shipped page included: a broken invariant stops with the file,
// line and condition instead of running on into undefined behaviour.
#pragma once

namespace pt2lab {

[[noreturn]] void check_failed(const char* file, int line, const char* condition);

} // namespace pt2lab

#define PT2LAB_CHECK(cond)                                                                         \
    ((cond) ? static_cast<void>(0) : ::pt2lab::check_failed(__FILE__, __LINE__, #cond))

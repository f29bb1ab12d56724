// Python-compatible repr of floats and strings; fx naming rules.
#include <catch2/catch.hpp>

#include "graph/namespace.h"
#include "util/pyrepr.h"

using namespace pt2lab;

TEST_CASE("floats print as Python's repr", "[util]") {
    // Expected strings are what CPython's repr() prints for these doubles.
    CHECK(py_float_repr(1.0) == "1.0");
    CHECK(py_float_repr(0.1) == "0.1");
    CHECK(py_float_repr(1e-05) == "1e-05");
    CHECK(py_float_repr(0.0001) == "0.0001");
    CHECK(py_float_repr(1e16) == "1e+16");
    CHECK(py_float_repr(1e15) == "1000000000000000.0");
    CHECK(py_float_repr(123456789012345678.0) == "1.2345678901234568e+17");
    CHECK(py_float_repr(0.021406318992376328) == "0.021406318992376328");
    CHECK(py_float_repr(-2.5) == "-2.5");
    CHECK(py_float_repr(-0.0) == "-0.0");
    CHECK(py_float_repr(1.5e300) == "1.5e+300");
    CHECK(py_float_repr(1e-12) == "1e-12");
    CHECK(py_float_repr(3.0 / 255.0) == "0.011764705882352941");
    CHECK(py_float_repr(static_cast<double>(1.1920928955078125e-07f)) == "1.1920928955078125e-07");
    CHECK(py_float_repr(1.0 / 0.0) == "inf");
    CHECK(py_float_repr(-1.0 / 0.0) == "-inf");
    CHECK(py_float_repr(0.0 / 0.0) == "nan");
    CHECK(py_float_repr(100.0) == "100.0");
    CHECK(py_float_repr(5e-324) == "5e-324");
}

TEST_CASE("strings print as Python's repr", "[util]") {
    CHECK(py_str_repr("nearest") == "'nearest'");
    CHECK(py_str_repr("it's") == "\"it's\"");
    CHECK(py_str_repr("a'b\"c") == "'a\\'b\"c'");
    CHECK(py_str_repr("line\nnext\\") == "'line\\nnext\\\\'");
}

TEST_CASE("fx namespace: unique, legal, builtin-safe names", "[util]") {
    Namespace ns;
    CHECK(ns.create_name("relu") == "relu");
    CHECK(ns.create_name("relu") == "relu_1");
    CHECK(ns.create_name("relu") == "relu_2");
    CHECK(ns.create_name("abs") == "abs_1");     // shadows a builtin
    CHECK(ns.create_name("input") == "input_1"); // shadows a builtin
    CHECK(ns.create_name("body.0") == "body_0");
    CHECK(ns.create_name("0weird") == "_0weird");
    CHECK(ns.create_name("for") == "for_1");     // keyword
    CHECK(ns.create_name("torch") == "torch_1"); // fx's own globals
    CHECK(ns.create_name("getitem_3") == "getitem_3");
    CHECK(ns.create_name("getitem") == "getitem");
    CHECK(ns.create_name("getitem") == "getitem_4"); // counting resumes after the explicit _3
    CHECK(ns.create_name("a.b-c") == "a_b_c");
    CHECK(snake_case("BatchNorm2d") == "batch_norm2d");
    CHECK(snake_case("conv2d") == "conv2d");
}

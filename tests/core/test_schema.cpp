// The op schema table: every entry parses, arguments/defaults are read
// correctly, and trailing-default dropping matches what export records.
#include <catch2/catch.hpp>

#include "graph/graph.h"
#include "graph/op_schema.h"
#include "graph/op_table.h"

using namespace pt2lab;

TEST_CASE("every schema in the table parses and round-trips its types", "[schema]") {
    const auto& table = op_table();
    REQUIRE(table.size() == kOpCount);
    for (const OpInfo& op : table) {
        const OpSchema& s = op.schema;
        INFO(s.text);
        CHECK(&op_info(op.id) == &op);
        CHECK(find_op_schema(s.target()) == &s);
        // Types print back as written in the schema text.
        for (const SchemaArg& a : s.arguments)
            CHECK(s.text.find(a.type.str() + " " + a.name) != std::string::npos);
    }
}

TEST_CASE("conv2d: names, types, expanded defaults", "[schema]") {
    const OpSchema* s = find_op_schema("torch.ops.aten.conv2d.default");
    REQUIRE(s);
    CHECK(s->ns == "aten");
    CHECK(s->name == "conv2d");
    CHECK(s->overload == "default");
    CHECK(s->overload_str() == "aten.conv2d.default");
    REQUIRE(s->arguments.size() == 7);
    CHECK(s->arguments[2].name == "bias");
    CHECK(s->arguments[2].type.optional);
    CHECK(s->arguments[2].default_value.is_none());
    CHECK(s->arguments[3].name == "stride");
    CHECK(s->arguments[3].type.base == "SymInt");
    CHECK(s->arguments[3].type.list_size == 2);
    CHECK(arg_equal(s->arguments[3].default_value, Argument::int_list({1, 1})));
    CHECK(arg_equal(s->arguments[4].default_value, Argument::int_list({0, 0})));
    CHECK(arg_equal(s->arguments[6].default_value, Argument::from_int(1)));
    CHECK_FALSE(s->is_mutable());
}

TEST_CASE("kwarg-only, aliasing and multiple returns", "[schema]") {
    const OpSchema* add_ = find_op_schema("torch.ops.aten.add_.Tensor");
    REQUIRE(add_);
    CHECK(add_->is_mutable());
    CHECK(add_->arguments[0].type.alias == "a!");
    CHECK(add_->arguments[2].kwarg_only);
    CHECK(add_->arguments[2].name == "alpha");

    const OpSchema* mean = find_op_schema("torch.ops.aten.mean.dim");
    REQUIRE(mean);
    CHECK(mean->arguments[1].type.optional);
    CHECK(mean->arguments[1].type.is_list);
    CHECK_FALSE(mean->arguments[1].has_default);
    CHECK(mean->arguments[3].kwarg_only);

    const OpSchema* bn =
        find_op_schema("torch.ops.aten._native_batch_norm_legit_functional.default");
    REQUIRE(bn);
    CHECK(bn->returns.size() == 5);
    CHECK(bn->returns[3].name == "running_mean_out");
    CHECK(find_op_schema("torch.ops.aten.copy_.default")->is_mutable());
    CHECK(find_op_schema("operator.getitem") != nullptr);
    CHECK(find_op_schema("torch.ops.aten.not_an_op.default") == nullptr);

    const OpSchema* mp = find_op_schema("torch.ops.aten.max_pool2d.default");
    REQUIRE(mp);
    CHECK(arg_equal(mp->arguments[2].default_value, Argument::list({})));
}

TEST_CASE("bad schema text gives an error with a column", "[schema]") {
    auto r = parse_op_schema("aten::broken(Tensor self");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().where.rfind("schema column", 0) == 0);
    CHECK_FALSE(parse_op_schema("no_namespace(Tensor self) -> Tensor").ok());
    CHECK_FALSE(parse_op_schema("aten::f(Tensor self) Tensor").ok());
}

TEST_CASE("trailing defaults drop the way export records calls", "[schema]") {
    const OpSchema* conv = find_op_schema("torch.ops.aten.conv2d.default");
    Graph g;
    Node* x = g.placeholder("x");
    Node* w = g.placeholder("w");
    auto X = Argument::from_node(x), W = Argument::from_node(w);
    // Conv2d(3, 8, 3, padding=1, bias=False) calls F.conv2d with every argument.
    std::vector<Argument> args = {X,
                                  W,
                                  Argument::none(),
                                  Argument::int_list({1, 1}),
                                  Argument::int_list({1, 1}),
                                  Argument::int_list({1, 1}),
                                  Argument::from_int(1)};
    Kwargs kw;
    drop_trailing_defaults(*conv, args, kw);
    // [C] fact sheet 1.2: conv2d.default(x, p_conv_weight, None, [1, 1], [1, 1])
    CHECK(args.size() == 5);
    // 1x1 conv with no padding: everything after weight is default
    std::vector<Argument> args2 = {X,
                                   W,
                                   Argument::none(),
                                   Argument::int_list({1, 1}),
                                   Argument::int_list({0, 0}),
                                   Argument::int_list({1, 1}),
                                   Argument::from_int(1)};
    drop_trailing_defaults(*conv, args2, kw);
    CHECK(args2.size() == 2);
    // stride 2 survives, padding default after it goes
    std::vector<Argument> args3 = {X, W, Argument::none(), Argument::int_list({2, 2}),
                                   Argument::int_list({0, 0})};
    drop_trailing_defaults(*conv, args3, kw);
    CHECK(args3.size() == 4);
    // kwarg-only defaults go; others stay
    const OpSchema* addmm = find_op_schema("torch.ops.aten.addmm.default");
    std::vector<Argument> a4 = {X, W, X};
    Kwargs k4 = {{"beta", Argument::from_int(1)}, {"alpha", Argument::from_float(2.0)}};
    drop_trailing_defaults(*addmm, a4, k4);
    CHECK(a4.size() == 3);
    REQUIRE(k4.size() == 1);
    CHECK(k4[0].first == "alpha");
}

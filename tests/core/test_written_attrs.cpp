// attrs_written_in_place: the buffers a module's run can change, on the
// lesson graphs (train mode writes the running statistics and
// num_batches_tracked; a plain conv -> relu writes nothing).
#include <catch2/catch.hpp>

#include "graph/written_attrs.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;

TEST_CASE("attributes a module run writes in place", "[graph]") {
    auto module_of = [](const std::string& asset) {
        ExportedProgram ep = pt2lab_test::load_asset(asset);
        auto gm = unlift(ep);
        REQUIRE(gm.ok());
        return gm.take();
    };
    GraphModule train = module_of("conv_bn_relu_train");
    std::set<std::string> w = attrs_written_in_place(*train.graph);
    CHECK(w.count("bn.running_mean"));
    CHECK(w.count("bn.running_var"));
    CHECK(w.count("bn.num_batches_tracked"));
    CHECK_FALSE(w.count("conv.weight"));
    GraphModule plain = module_of("conv_relu");
    CHECK(attrs_written_in_place(*plain.graph).empty());
}

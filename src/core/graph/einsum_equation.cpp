// Reading einsum equations as ATen does; see einsum_equation.h.
#include "graph/einsum_equation.h"

namespace pt2lab {

namespace {

bool is_letter(char ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}
int label_of(char ch) {
    return ch <= 'Z' ? ch - 'A' : ch - 'a' + 26;
}
Error einsum_error(const std::string& message) {
    return make_error("", "einsum(): " + message);
}
Error no_ellipsis() {
    return make_error("", "einsum(): ellipsis (...) is not supported by pt2lab",
                      "write every dimension's label");
}

// An operand's or the output's "...": a valid one is refused (not supported), a lone
// '.' is ATen's error. `i` is at the first '.'.
Error ellipsis_at(const std::string& part, size_t i, const std::string& what) {
    if (i + 2 < part.size() && part[i + 1] == '.' && part[i + 2] == '.') return no_ellipsis();
    return einsum_error("found '.' for " + what + " that is not part of any ellipsis" +
                        (what == "output" ? " (...)" : ""));
}

} // namespace

char einsum_letter(int label) {
    return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26);
}

bool EinsumEquation::repeats_a_label() const {
    for (const auto& labels : operands)
        for (size_t a = 0; a < labels.size(); ++a)
            for (size_t b = a + 1; b < labels.size(); ++b)
                if (labels[a] == labels[b]) return true;
    return false;
}

Result<EinsumEquation> parse_einsum(const std::string& equation,
                                    const std::vector<std::vector<int64_t>>& operand_sizes) {
    const size_t num_ops = operand_sizes.size();
    if (num_ops == 0) return einsum_error("must provide at least one operand");
    EinsumEquation eq;
    eq.operands.resize(num_ops);
    const size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    size_t op = 0;
    for (size_t i = 0; i < lhs.size(); ++i) {
        const char ch = lhs[i];
        if (ch == ' ') continue;
        if (ch == '.') return ellipsis_at(lhs, i, "operand " + std::to_string(op));
        if (ch == ',') {
            if (++op >= num_ops)
                return einsum_error("fewer operands were provided than specified in the equation");
            continue;
        }
        if (!is_letter(ch))
            return einsum_error("invalid subscript given at index " + std::to_string(i) +
                                " in the equation string, subscripts must be in [a-zA-Z]");
        eq.operands[op].push_back(label_of(ch));
    }
    if (op != num_ops - 1)
        return einsum_error("more operands were provided than specified in the equation");

    std::vector<int64_t> count(EinsumEquation::kLabels, 0);
    for (size_t k = 0; k < num_ops; ++k) {
        for (int l : eq.operands[k]) ++count[static_cast<size_t>(l)];
        const size_t labels = eq.operands[k].size(), dims = operand_sizes[k].size();
        if (labels != dims)
            return einsum_error(
                "the number of subscripts in the equation (" + std::to_string(labels) +
                ") does not match the number of dimensions (" + std::to_string(dims) +
                ") for operand " + std::to_string(k) + " and no ellipsis was given");
    }

    int64_t pos = 0;
    if (arrow == std::string::npos) { // implicit output: the labels seen once, in label order
        for (int l = 0; l < EinsumEquation::kLabels; ++l)
            if (count[static_cast<size_t>(l)] == 1) {
                eq.position[static_cast<size_t>(l)] = pos++;
                eq.output.push_back(l);
            }
    } else {
        const std::string rhs = equation.substr(arrow + 2);
        for (size_t i = 0; i < rhs.size(); ++i) {
            const char ch = rhs[i];
            if (ch == ' ') continue;
            if (ch == '.') return ellipsis_at(rhs, i, "output");
            if (!is_letter(ch))
                return einsum_error("invalid subscript given at index " +
                                    std::to_string(lhs.size() + 2 + i) +
                                    " in the equation string, subscripts must be in [a-zA-Z]");
            const size_t l = static_cast<size_t>(label_of(ch));
            if (count[l] == 0 || eq.position[l] != -1)
                return einsum_error(std::string("output subscript ") + ch +
                                    (eq.position[l] > -1
                                         ? " appears more than once in the output"
                                         : " does not appear in the equation for any input "
                                           "operand"));
            eq.position[l] = pos++;
            eq.output.push_back(static_cast<int>(l));
        }
    }
    for (size_t l = 0; l < EinsumEquation::kLabels; ++l)
        if (count[l] > 0 && eq.position[l] == -1) eq.position[l] = pos++;
    eq.aligned_dims = pos;

    // Sizes: a label's non-1 sizes must agree (1 broadcasts); a repeated label's must be equal.
    for (size_t k = 0; k < num_ops; ++k) {
        const auto& labels = eq.operands[k];
        const auto& sizes = operand_sizes[k];
        for (size_t d = 0; d < labels.size(); ++d) {
            const size_t l = static_cast<size_t>(labels[d]);
            size_t first = d;
            for (size_t e = 0; e < d; ++e)
                if (labels[e] == labels[d]) {
                    first = e;
                    break;
                }
            if (first != d) {
                if (sizes[d] != sizes[first])
                    return einsum_error(std::string("subscript ") + einsum_letter(labels[d]) +
                                        " is repeated for operand " + std::to_string(k) +
                                        " but the sizes don't match, " + std::to_string(sizes[d]) +
                                        " != " + std::to_string(sizes[first]));
                continue;
            }
            if (sizes[d] == 1) continue;
            if (eq.size[l] != 1 && eq.size[l] != sizes[d])
                return einsum_error(std::string("subscript ") + einsum_letter(labels[d]) +
                                    " has size " + std::to_string(sizes[d]) + " for operand " +
                                    std::to_string(k) +
                                    " which does not broadcast with previously seen size " +
                                    std::to_string(eq.size[l]));
            eq.size[l] = sizes[d];
        }
    }
    return eq;
}

} // namespace pt2lab

// The structurizer checked for real: every region tree is lowered back into
// IR (frontend/structured_lowering.h) and the lowered function must verify
// and compute exactly what the original computes under the interpreter —
// results, trap codes and errors — with and without break/continue. Inputs:
// every function of tests/filetests/run on its `; run:` arguments, the
// random generator's modules (fuzz/gen) over many seeds, and random
// unstructured CFGs (gotos everywhere, multi-exit loops, br_table) built
// here, which the generator's structured bodies never produce.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/structurize.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "frontend/structured_lowering.h"
#include "fuzz/gen/generator.h"

namespace heron {
namespace {

std::string source_dir() {
    if (const char* env = std::getenv("HERON_SOURCE_DIR")) return env;
    return HERON_SOURCE_DIR;
}

std::string describe(const InterpOutcome& r) {
    switch (r.kind) {
    case InterpOutcome::Kind::Return: {
        std::string s = "[";
        for (const DataValue& v : r.values) s += v.to_string() + " ";
        return s + "]";
    }
    case InterpOutcome::Kind::Trap: return "trap " + trapcode_name(r.trap);
    case InterpOutcome::Kind::Error: return "error";
    case InterpOutcome::Kind::OutOfFuel: return "out of fuel";
    }
    return "?";
}

/// The structured and lowered copies of a set of functions, in one form.
struct Lowered {
    std::vector<std::unique_ptr<Function>> funcs;
    std::string error;  // the first failure, naming the function
};

Lowered lower_all(const std::vector<const Function*>& funcs, bool no_break) {
    Lowered out;
    Structurizer s;
    FunctionBuilderContext ctx;
    for (const Function* f : funcs) {
        RegionTree tree;
        if (auto err = s.run(*f, tree)) {
            out.error = f->name.to_string() + ": " + err->message;
            return out;
        }
        if (no_break) {
            if (auto err = remove_break_continue(tree)) {
                out.error = f->name.to_string() + ": " + err->message;
                return out;
            }
        }
        auto lowered = std::make_unique<Function>();
        if (auto err = lower_region_tree(*f, tree, *lowered, ctx)) {
            out.error = f->name.to_string() + ": lowering: " + *err;
            return out;
        }
        VerifierErrors errs;
        if (!verify_function(*lowered, errs)) {
            out.error = f->name.to_string() + ": lowered function does not verify: " + errs[0].message + "\n" +
                        print_function(*lowered) + "\n" + print_region_tree(*f, tree);
            return out;
        }
        out.funcs.push_back(std::move(lowered));
    }
    return out;
}

/// Runs `name` on `args` in both interpreters; "" if they agree.
std::string compare(Interpreter& a, Interpreter& b, const std::string& name, const std::vector<DataValue>& args) {
    InterpOutcome x = a.call(name, args);
    InterpOutcome y = b.call(name, args);
    if (x.kind == y.kind && x.values == y.values && (x.kind != InterpOutcome::Kind::Trap || x.trap == y.trap)) {
        return "";
    }
    return "%" + name + ": original " + describe(x) + ", structured " + describe(y);
}

// --- the run file tests -------------------------------------------------------------

struct FileCounts {
    uint32_t functions = 0;
    uint32_t directives = 0;
};

void check_run_files(bool no_break, FileCounts& counts) {
    const std::filesystem::path dir = std::filesystem::path(source_dir()) / "tests/filetests/run";
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().extension() == ".clif") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    ASSERT_GT(files.size(), 30u);
    for (const auto& path : files) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        ParseOutcome parsed = parse_test_file(ss.str());
        ASSERT_TRUE(parsed.ok()) << path;
        std::vector<const Function*> funcs;
        for (const ParsedFunction& pf : parsed.file.functions) funcs.push_back(pf.func.get());
        Lowered lowered = lower_all(funcs, no_break);
        ASSERT_EQ(lowered.error, "") << path;
        Interpreter original, structured;
        original.set_fuel(50'000'000);
        structured.set_fuel(50'000'000);
        for (const Function* f : funcs) original.add_function(*f);
        for (const auto& f : lowered.funcs) structured.add_function(*f);
        counts.functions += static_cast<uint32_t>(funcs.size());
        for (const ParsedFunction& pf : parsed.file.functions) {
            for (const Comment& c : pf.comments) {
                std::string_view t = c.text;
                while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
                if (t.substr(0, 4) != "run:") continue;
                Diagnostic diag;
                auto cmd = parse_run_command(t.substr(4), RunCommand::Kind::Run, pf.func->signature, diag);
                if (!cmd) continue;
                ++counts.directives;
                EXPECT_EQ(compare(original, structured, cmd->func_name, cmd->args), "") << path << ":" << c.line;
            }
        }
    }
}

TEST(Structure, RunFileTestsRoundTrip) {
    FileCounts counts;
    check_run_files(false, counts);
    std::cout << "[structure] " << counts.functions << " functions, " << counts.directives
              << " run directives round-tripped\n";
    EXPECT_GT(counts.directives, 1000u);
}

TEST(Structure, RunFileTestsRoundTripWithoutBreak) {
    FileCounts counts;
    check_run_files(true, counts);
    std::cout << "[structure --no-break] " << counts.functions << " functions, " << counts.directives
              << " run directives round-tripped\n";
    EXPECT_GT(counts.directives, 1000u);
}

// --- the random generator's modules ----------------------------------------------------

void check_generator(bool no_break, uint64_t seeds) {
    gen::GenOptions options;
    options.canonicalize_nans = true;
    uint64_t functions = 0, runs = 0;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
        gen::Entropy entropy(seed);
        gen::Module m = gen::generate_module(entropy, options);
        std::vector<const Function*> funcs;
        for (const auto& f : m.functions) funcs.push_back(f.get());
        Lowered lowered = lower_all(funcs, no_break);
        ASSERT_EQ(lowered.error, "") << "seed " << seed;
        Interpreter original, structured;
        for (const Function* f : funcs) original.add_function(*f);
        for (const auto& f : lowered.funcs) structured.add_function(*f);
        for (size_t k = 0; k < funcs.size(); ++k) {
            ++functions;
            const std::string name = funcs[k]->name.to_string().substr(1);
            for (const auto& args : m.inputs[k]) {
                ++runs;
                const std::string diff = compare(original, structured, name, args);
                ASSERT_EQ(diff, "") << "seed " << seed << "\n" << print_function(*funcs[k]);
            }
        }
    }
    std::cout << "[structure" << (no_break ? " --no-break" : "") << "] " << seeds << " generator seeds, "
              << functions << " functions, " << runs << " calls round-tripped\n";
}

TEST(Structure, GeneratorModulesRoundTrip) { check_generator(false, 1000); }
TEST(Structure, GeneratorModulesRoundTripWithoutBreak) { check_generator(true, 1000); }

// --- random unstructured CFGs ---------------------------------------------------------

/// %cfg(i32) -> i32 over `n` nodes with random jumps, brifs, br_tables and
/// returns between them. Every node is a pair of blocks: the first counts
/// down a fuel parameter and leaves to a shared return block at zero (so
/// every loop has that extra exit and every run ends), the second mixes the
/// accumulator and branches at random.
std::unique_ptr<Function> random_cfg(std::mt19937& rng, uint32_t n) {
    Signature sig(CallConv::SystemV);
    sig.params = {AbiParam(types::I32)};
    sig.returns = {AbiParam(types::I32)};
    auto f = std::make_unique<Function>(ExternalName::testcase("cfg"), sig);
    FunctionBuilderContext ctx;
    FunctionBuilder b(*f, ctx);
    const Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    std::vector<Block> head(n), body(n);
    std::vector<Value> fuel(n), acc(n);
    for (uint32_t i = 0; i < n; ++i) {
        head[i] = b.create_block();
        body[i] = b.create_block();
        fuel[i] = b.append_block_param(head[i], types::I32);
        acc[i] = b.append_block_param(head[i], types::I32);
    }
    const Block done = b.create_block();
    const Value result = b.append_block_param(done, types::I32);

    b.switch_to_block(entry);
    const Value x = b.block_params(entry)[0];
    b.ins().jump(head[0], {b.ins().iconst(types::I32, 40), x});
    auto pick = [&] { return std::uniform_int_distribution<uint32_t>(1, n - 1)(rng); };
    for (uint32_t i = 0; i < n; ++i) {
        b.switch_to_block(head[i]);
        const Value left = b.ins().iadd_imm(fuel[i], -1);
        const Value mixed = b.ins().iadd(b.ins().imul(acc[i], b.ins().iconst(types::I32, 31)),
                                         b.ins().iconst(types::I32, i + 1));
        b.ins().brif(left, body[i], {}, done, std::vector<Value>{mixed});
        b.switch_to_block(body[i]);
        const Value twisted = b.ins().bxor(mixed, x);
        switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
        case 0: b.ins().return_({twisted}); break;
        case 1:
        case 2:
        case 3: b.ins().jump(head[pick()], {left, twisted}); break;
        case 4: {
            const Value sel = b.ins().urem(mixed, b.ins().iconst(types::I32, 4));
            JumpTableData jt;
            jt.all.push_back(f->dfg.block_call(head[pick()], std::vector<Value>{left, mixed}));
            for (int k = 0; k < 3; ++k) {
                jt.all.push_back(f->dfg.block_call(head[pick()], std::vector<Value>{left, k ? twisted : mixed}));
            }
            b.ins().br_table(sel, b.create_jump_table(std::move(jt)));
            break;
        }
        default: {
            const Value bit = b.ins().band(mixed, b.ins().iconst(types::I32, 1 << (i % 7)));
            b.ins().brif(bit, head[pick()], std::vector<Value>{left, mixed}, head[pick()],
                         std::vector<Value>{left, twisted});
            break;
        }
        }
    }
    b.switch_to_block(done);
    b.ins().return_({result});
    b.seal_all_blocks();
    EXPECT_TRUE(b.finalize().ok());
    return f;
}

void check_random_cfgs(bool no_break) {
    std::mt19937 rng(2026);
    uint32_t reducible = 0, irreducible = 0, calls = 0;
    for (uint32_t round = 0; reducible < 1000 && round < 200000; ++round) {
        const uint32_t n = std::uniform_int_distribution<uint32_t>(2, 12)(rng);
        std::unique_ptr<Function> f = random_cfg(rng, n);
        VerifierErrors errs;
        ASSERT_TRUE(verify_function(*f, errs)) << print_function(*f);
        RegionTree tree;
        Structurizer s;
        if (auto err = s.run(*f, tree)) {
            EXPECT_NE(err->message.find("irreducible control flow: edge block"), std::string::npos) << err->message;
            ++irreducible;
            continue;
        }
        ++reducible;
        Lowered lowered = lower_all({f.get()}, no_break);
        ASSERT_EQ(lowered.error, "") << print_function(*f);
        Interpreter original, structured;
        original.add_function(*f);
        structured.add_function(*lowered.funcs[0]);
        for (int32_t input : {0, 1, -1, 7, 12345, -99999, 0x5555, 1 << 30}) {
            ++calls;
            const std::string diff = compare(original, structured, "cfg", {DataValue::i32(input)});
            ASSERT_EQ(diff, "") << print_function(*f) << "\n" << print_function(*lowered.funcs[0]);
        }
    }
    std::cout << "[structure" << (no_break ? " --no-break" : "") << "] random CFGs: " << reducible
              << " reducible round-tripped (" << calls << " calls), " << irreducible << " irreducible rejected\n";
    EXPECT_EQ(reducible, 1000u);
    EXPECT_GT(irreducible, 0u);
}

TEST(Structure, RandomCfgsRoundTrip) { check_random_cfgs(false); }
TEST(Structure, RandomCfgsRoundTripWithoutBreak) { check_random_cfgs(true); }

// --- the checker itself can fail ----------------------------------------------------------

TEST(Structure, WrongTreeIsCaught) {
    // Swapping the arms of the first `if` must change some result.
    const char* text = R"(function %f(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    v1 = iconst.i32 1
    return v1
block2:
    v2 = iconst.i32 2
    return v2
}
)";
    ParseOutcome parsed = parse_test_file(text);
    ASSERT_TRUE(parsed.ok());
    const Function& f = *parsed.file.functions[0].func;
    Structurizer s;
    RegionTree tree;
    ASSERT_FALSE(s.run(f, tree).has_value());
    for (Stmt& st : tree.stmts) {
        if (st.kind == StmtKind::If) std::swap(st.kids[0], st.kids[1]);
    }
    FunctionBuilderContext ctx;
    Function lowered;
    ASSERT_FALSE(lower_region_tree(f, tree, lowered, ctx).has_value());
    Interpreter a, b;
    a.add_function(f);
    b.add_function(lowered);
    EXPECT_NE(compare(a, b, "f", {DataValue::i32(1)}), "");
}

/// A loop nest `levels` deep: block i -> block i+1 down to the innermost
/// self-loop, then latches that leave one level at a time.
std::string deep_nest(uint32_t levels) {
    const uint32_t k = levels;
    std::string t = "function %deep(i32) -> i32 {\nblock0(v0: i32):\n    jump block1\n";
    for (uint32_t i = 1; i < k; ++i) t += "block" + std::to_string(i) + ":\n    jump block" + std::to_string(i + 1) + "\n";
    t += "block" + std::to_string(k) + ":\n    brif v0, block" + std::to_string(k) + ", block" + std::to_string(2 * k) + "\n";
    for (uint32_t i = k; i >= 1; --i) {
        t += "block" + std::to_string(k + i) + ":\n    brif v0, block" + std::to_string(i) + ", block" +
             std::to_string(i > 1 ? k + i - 1 : 2 * k + 1) + "\n";
    }
    return t + "block" + std::to_string(2 * k + 1) + ":\n    return v0\n}\n";
}

TEST(Structure, DeepNestsRoundTripOrFailCleanly) {
    ParseOutcome ok = parse_test_file(deep_nest(1000));
    ASSERT_TRUE(ok.ok());
    for (bool no_break : {false, true}) {
        Lowered lowered = lower_all({ok.file.functions[0].func.get()}, no_break);
        ASSERT_EQ(lowered.error, "");
        Interpreter a, b;
        a.add_function(*ok.file.functions[0].func);
        b.add_function(*lowered.funcs[0]);
        EXPECT_EQ(compare(a, b, "deep", {DataValue::i32(0)}), "");
    }
    // Too deep for the recursive consumers: an error, not a stack overflow.
    ParseOutcome deep = parse_test_file(deep_nest(15000));
    ASSERT_TRUE(deep.ok());
    Structurizer s;
    RegionTree tree;
    auto err = s.run(*deep.file.functions[0].func, tree);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->message.find("nest deeper than"), std::string::npos) << err->message;
}

TEST(Structure, PassesProduceStructuredAndRoundTrip) {
    // The generator's functions through loop-form, structure and
    // remove-break: the context's tree, lowered, computes what the
    // function computes after loop-form.
    gen::GenOptions options;
    options.canonicalize_nans = true;
    uint32_t checked = 0;
    for (uint64_t seed = 1; seed <= 100; ++seed) {
        gen::Entropy entropy(seed);
        gen::Module m = gen::generate_module(entropy, options);
        for (size_t k = 0; k < m.functions.size(); ++k) {
            for (const char* pipeline : {"loop-form,structure", "structure,remove-break"}) {
                Function& f = *m.functions[k];
                PassManager pm;
                ASSERT_FALSE(pm.add_pipeline(pipeline).has_value());
                auto err = pm.run(f);
                ASSERT_FALSE(err.has_value()) << *err;
                ASSERT_TRUE(pm.properties().contains(Property::Structured));
                EXPECT_EQ(pm.context().region_tree().no_break, std::string(pipeline).find("remove-break") != std::string::npos);
                FunctionBuilderContext ctx;
                Function lowered;
                ASSERT_FALSE(lower_region_tree(f, pm.context().region_tree(), lowered, ctx).has_value());
                Interpreter a, b;
                for (const auto& g : m.functions) a.add_function(*g);
                for (const auto& g : m.functions) b.add_function(g.get() == &f ? lowered : *g);
                for (const auto& args : m.inputs[k]) {
                    const std::string name = f.name.to_string().substr(1);
                    ASSERT_EQ(compare(a, b, name, args), "") << "seed " << seed;
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 1000u);
}

TEST(Structure, PassOrderAndIrreducibleErrors) {
    ParseOutcome parsed = parse_test_file(R"(function %irr(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    jump block2
block2:
    brif v0, block1, block3
block3:
    return v0
}
)");
    ASSERT_TRUE(parsed.ok());
    Function& f = *parsed.file.functions[0].func;
    PassManager pm;
    ASSERT_FALSE(pm.add_pipeline("structure").has_value());
    auto err = pm.run(f);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->find("irreducible control flow: edge block2 -> block1"), std::string::npos) << *err;
    PassManager early;
    ASSERT_FALSE(early.add_pipeline("remove-break").has_value());
    err = early.run(f);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->find("requires Structured"), std::string::npos) << *err;
}

TEST(Structure, IrreducibleNamesTheEdge) {
    const char* text = R"(function %irr(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    jump block2
block2:
    brif v0, block1, block3
block3:
    return v0
}
)";
    ParseOutcome parsed = parse_test_file(text);
    ASSERT_TRUE(parsed.ok());
    Structurizer s;
    RegionTree tree;
    auto err = s.run(*parsed.file.functions[0].func, tree);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->message, "irreducible control flow: edge block2 -> block1");
    EXPECT_EQ(err->from, Block(2));
    EXPECT_EQ(err->to, Block(1));
}

}  // namespace
}  // namespace heron

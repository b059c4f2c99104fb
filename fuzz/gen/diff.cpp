// The differential harness (see diff.h): outcome comparison, reporting, and
// the interpreter engine.
#include "fuzz/gen/diff.h"

#include <cstdio>

namespace heron::gen {

bool InterpreterEngine::load(const Module& m, std::string& error) {
    interp_ = std::make_unique<Interpreter>();
    interp_->set_fuel(fuel_);
    interp_->set_max_depth(max_depth_);
    for (const auto& f : m.functions) interp_->add_function(*f);
    error.clear();
    return true;
}

InterpOutcome InterpreterEngine::call(const Function& func, std::span<const DataValue> args) {
    HERON_ASSERT(interp_ && "load a module first");
    return interp_->call(func, args);
}

namespace {

bool is_nan(const DataValue& v) {
    if (v.type == types::F32) return (v.bits & 0x7f800000u) == 0x7f800000u && (v.bits & 0x007fffffu) != 0;
    if (v.type == types::F64) {
        return (v.bits & 0x7ff0000000000000u) == 0x7ff0000000000000u && (v.bits & 0x000fffffffffffffu) != 0;
    }
    return false;
}

bool values_match(const DataValue& a, const DataValue& b, NanCompare nans) {
    if (a.type != b.type) return false;
    if (a.bits == b.bits) return true;
    return nans == NanCompare::AnyNan && is_nan(a) && is_nan(b);
}

const char* kind_name(InterpOutcome::Kind k) {
    switch (k) {
    case InterpOutcome::Kind::Return: return "return";
    case InterpOutcome::Kind::Trap: return "trap";
    case InterpOutcome::Kind::Error: return "error";
    case InterpOutcome::Kind::OutOfFuel: return "out of fuel";
    }
    return "?";
}

std::string describe_args(std::span<const DataValue> args) {
    std::string s = "(";
    for (size_t i = 0; i < args.size(); ++i) {
        if (i) s += ", ";
        s += describe_value(args[i]);
    }
    return s + ")";
}

}  // namespace

std::string describe_value(const DataValue& v) {
    char buf[64];
    if (v.type.is_int()) {
        unsigned shift = 64 - v.type.bits();
        auto s = static_cast<long long>(static_cast<int64_t>(v.bits << shift) >> shift);
        std::snprintf(buf, sizeof buf, "%s %lld", std::string(v.type.name()).c_str(), s);
    } else {
        std::snprintf(buf, sizeof buf, "%s 0x%0*llx", std::string(v.type.name()).c_str(),
                      static_cast<int>(v.type.bytes() * 2), static_cast<unsigned long long>(v.bits));
    }
    return buf;
}

std::string describe_outcome(const InterpOutcome& o) {
    switch (o.kind) {
    case InterpOutcome::Kind::Return: {
        std::string s = "return [";
        for (size_t i = 0; i < o.values.size(); ++i) {
            if (i) s += ", ";
            s += describe_value(o.values[i]);
        }
        return s + "]";
    }
    case InterpOutcome::Kind::Trap:
        return "trap " + trapcode_name(o.trap) + (o.message.empty() ? "" : " (" + o.message + ")");
    case InterpOutcome::Kind::Error: return "error: " + o.message;
    case InterpOutcome::Kind::OutOfFuel: return "out of fuel";
    }
    return "?";
}

bool outcomes_match(const InterpOutcome& a, const InterpOutcome& b, NanCompare nans, std::string& why) {
    why.clear();
    if (a.kind == InterpOutcome::Kind::Error || b.kind == InterpOutcome::Kind::Error) {
        why = "engine error";
        return false;
    }
    if (a.kind != b.kind) {
        why = std::string("kinds differ: ") + kind_name(a.kind) + " vs " + kind_name(b.kind);
        return false;
    }
    if (a.kind == InterpOutcome::Kind::Trap) {
        if (a.trap == b.trap) return true;
        why = "trap codes differ";
        return false;
    }
    if (a.kind != InterpOutcome::Kind::Return) return true;
    if (a.values.size() != b.values.size()) {
        why = "result counts differ";
        return false;
    }
    for (size_t i = 0; i < a.values.size(); ++i) {
        if (!values_match(a.values[i], b.values[i], nans)) {
            why = "result " + std::to_string(i) + " differs";
            return false;
        }
    }
    return true;
}

void DiffResult::merge(const DiffResult& o, size_t max_reports) {
    pairs += o.pairs;
    returned += o.returned;
    trapped += o.trapped;
    skipped_fuel += o.skipped_fuel;
    mismatches += o.mismatches;
    for (const Mismatch& m : o.reports) {
        if (reports.size() < max_reports) reports.push_back(m);
    }
}

std::string DiffResult::summary() const {
    std::string s = "pairs " + std::to_string(pairs) + ": returned " + std::to_string(returned) +
                    ", trapped " + std::to_string(trapped) +
                    ", skipped (fuel) " + std::to_string(skipped_fuel) +
                    ", mismatches " + std::to_string(mismatches);
    for (const Mismatch& m : reports) {
        s += "\n  " + m.function + describe_args(m.args) + ": " + m.description;
    }
    return s;
}

DiffResult run_differential(const Module& m, Engine& a, Engine& b, const DiffOptions& options) {
    DiffResult r;
    auto report = [&](std::string function, std::vector<DataValue> args, std::string description) {
        ++r.mismatches;
        if (r.reports.size() < options.max_reports) {
            r.reports.push_back({std::move(function), std::move(args), std::move(description)});
        }
    };
    std::string error;
    for (Engine* e : {&a, &b}) {
        if (!e->load(m, error)) {
            report("(module)", {}, e->name() + " could not load the module: " + error);
            return r;
        }
    }
    for (size_t k = 0; k < m.functions.size(); ++k) {
        const Function& f = *m.functions[k];
        for (const std::vector<DataValue>& args : m.inputs[k]) {
            ++r.pairs;
            InterpOutcome oa = a.call(f, args);
            // A run `a` gave up on is not even started in `b`: a JIT has no
            // fuel and would spin forever.
            if (oa.kind == InterpOutcome::Kind::OutOfFuel) {
                ++r.skipped_fuel;
                continue;
            }
            InterpOutcome ob = b.call(f, args);
            if (ob.kind == InterpOutcome::Kind::OutOfFuel && oa.kind != InterpOutcome::Kind::Error) {
                ++r.skipped_fuel;
                continue;
            }
            std::string why;
            if (outcomes_match(oa, ob, options.nans, why)) {
                if (oa.kind == InterpOutcome::Kind::Return) ++r.returned;
                else ++r.trapped;
                continue;
            }
            report(f.name.to_string(), args,
                   why + ": " + a.name() + " " + describe_outcome(oa) + "; " + b.name() + " " +
                       describe_outcome(ob));
        }
    }
    return r;
}

}  // namespace heron::gen

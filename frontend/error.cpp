// Names of the frontend's error kinds, for messages and test output.
#include "frontend/error.h"

namespace heron {

const char* frontend_error_kind_name(FrontendError::Kind kind) {
    using K = FrontendError::Kind;
    switch (kind) {
    case K::NoCurrentBlock: return "NoCurrentBlock";
    case K::InstAfterTerminator: return "InstAfterTerminator";
    case K::SwitchToFilledBlock: return "SwitchToFilledBlock";
    case K::InvalidBlock: return "InvalidBlock";
    case K::BlockNotPristine: return "BlockNotPristine";
    case K::BranchToSealedBlock: return "BranchToSealedBlock";
    case K::SealedTwice: return "SealedTwice";
    case K::UnsealedBlock: return "UnsealedBlock";
    case K::UnterminatedBlock: return "UnterminatedBlock";
    case K::UndeclaredVariable: return "UndeclaredVariable";
    case K::WrongVariableType: return "WrongVariableType";
    case K::InvalidType: return "InvalidType";
    case K::InvalidValue: return "InvalidValue";
    case K::JumpTableReused: return "JumpTableReused";
    case K::DuplicateCase: return "DuplicateCase";
    case K::CaseOutOfRange: return "CaseOutOfRange";
    case K::BadSelectorType: return "BadSelectorType";
    case K::LoopMisuse: return "LoopMisuse";
    case K::AlreadyFinalized: return "AlreadyFinalized";
    }
    return "?";
}

}  // namespace heron

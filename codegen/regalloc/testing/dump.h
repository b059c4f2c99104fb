// Text form of an allocator input and, optionally, its result, for test and
// fuzzer failure messages:
//   block2(v7, v8) depth 1 <- block1 block3 -> block4
//     inst5: v9:Def:Late:Reuse(0)=r1 <- v3:Use:Early:Reg=r1, v4:Use:Early:Any=stack0  clobbers{r0 r2}
//       before: r1 -> stack0; ...
//     edge -> block4(v9, v3)
#pragma once

#include <string>

#include "codegen/regalloc/regalloc.h"

namespace heron::ra::testing {

std::string dump(const Function& func, const Output* out = nullptr);

}  // namespace heron::ra::testing

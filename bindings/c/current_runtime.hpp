// For the extension entry points of this folder that live outside damaris_c.cpp: the runtime
// damaris_initialize made, or nullptr (before it, after damaris_finalize, or when it failed).
#pragma once

namespace sidecore {
class runtime;
runtime* current_runtime() noexcept;
}  // namespace sidecore

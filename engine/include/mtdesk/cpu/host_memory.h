#pragma once
// How much memory the CPU engine may take before it loads a model.

#include <cstddef>
#include <filesystem>
#include <optional>

namespace mtdesk {

/// Bytes this process can still allocate without swapping: /proc/meminfo's MemAvailable (the
/// kernel's estimate, page cache that can be dropped included), lowered to what the cgroup
/// (v2: its memory.max − memory.current, e.g. a container's limit) leaves when that is less.
/// nullopt when /proc/meminfo cannot be read (not Linux). `proc` and `cgroup` are the
/// directories read (for tests): "/proc" and "/sys/fs/cgroup".
std::optional<std::size_t> available_host_memory(
    const std::filesystem::path& proc = "/proc",
    const std::filesystem::path& cgroup = "/sys/fs/cgroup");

}  // namespace mtdesk

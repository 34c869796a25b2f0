#include "mtdesk/cpu/host_memory.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

namespace mtdesk {
namespace {

// The first line of `path` as a whole number, or nullopt ("max", missing, unreadable).
std::optional<std::size_t> read_number(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || end == line.data()) return std::nullopt;
    return value;
}

}  // namespace

std::optional<std::size_t> available_host_memory(const std::filesystem::path& proc,
                                                 const std::filesystem::path& cgroup) {
    std::ifstream in(proc / "meminfo");
    std::optional<std::size_t> available;
    for (std::string line; in && std::getline(in, line);) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        const std::size_t at = line.find_first_of("0123456789");
        if (at == std::string::npos) break;
        std::size_t kib = 0;
        const auto [end, ec] = std::from_chars(line.data() + at, line.data() + line.size(), kib);
        if (ec == std::errc()) available = kib * 1024;
        break;
    }
    if (!available) return std::nullopt;
    // This process's cgroup (v2: the line "0::/path" of /proc/self/cgroup).
    std::filesystem::path group = cgroup;
    std::ifstream groups(proc / "self" / "cgroup");
    for (std::string line; groups && std::getline(groups, line);) {
        if (line.rfind("0::/", 0) == 0) group = cgroup / line.substr(4);
    }
    const auto limit = read_number(group / "memory.max");
    const auto used = read_number(group / "memory.current");
    if (limit && used) available = std::min(*available, *limit > *used ? *limit - *used : 0);
    return available;
}

}  // namespace mtdesk

#include "trained_pairs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace mtdesk::app {

std::vector<std::string> trained_languages(const std::string& model_dir) {
    std::ifstream in(std::filesystem::path(model_dir) / "training_summary.json");
    if (!in) return {};
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        if (!j.contains("langs")) return {};
        return j.at("langs").get<std::vector<std::string>>();
    } catch (const std::exception&) {
        return {};  // not a file this check understands
    }
}

bool untrained_pair(const std::vector<std::string>& langs, const Language* from,
                    const Language& to) {
    if (langs.empty()) return false;
    auto known = [&](std::string_view code) {
        return std::find(langs.begin(), langs.end(), code) != langs.end();
    };
    if (!from) return !(known(to.code) || to.code == "en");
    return !((from->code == "en" && known(to.code)) || (to.code == "en" && known(from->code)));
}

std::string language_list(const std::vector<std::string>& langs) {
    std::string list;
    for (const std::string& l : langs)
        list += (list.empty() ? "" : ", ") + l;
    return list;
}

}  // namespace mtdesk::app

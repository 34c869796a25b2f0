#pragma once
// Errors thrown by the engine. Every error about an input names the file and what is wrong.

#include <stdexcept>
#include <string>

namespace mtdesk {

/// Base class of every exception the engine throws on purpose.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A file the user gave us (model, tokenizer, config, document) is missing, unreadable or
/// malformed. what() reads "<file>: <problem>"; file() and problem() give the two parts.
class FileError : public Error {
  public:
    FileError(std::string file, std::string problem)
        : Error(file + ": " + problem), file_(std::move(file)), problem_(std::move(problem)) {}
    const std::string& file() const noexcept { return file_; }
    const std::string& problem() const noexcept { return problem_; }

  private:
    std::string file_;
    std::string problem_;
};

/// The model is well-formed but asks for something mtdesk does not implement
/// (an architecture, a RoPE scaling type, a chat template).
class UnsupportedError : public FileError {
  public:
    using FileError::FileError;
};

}  // namespace mtdesk

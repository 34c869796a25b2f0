#pragma once
// Where a translated document goes: next to its source, under a new name, never over an
// existing file.

#include <QString>

namespace mtdesk::app {

/// "dir/notes.txt" + "zh" -> "dir/notes.zh.txt"; when that exists, "dir/notes.zh (2).txt",
/// "dir/notes.zh (3).txt", ... the first name that is not taken (a symbolic link takes its
/// name even when its target is missing). A source without an
/// extension gets "name.zh". `extension` (without the dot), when given, replaces the source's
/// for outputs of another type: "dir/paper.pdf" + "de" + "txt" -> "dir/paper.de.txt".
QString translated_output_path(const QString& source_path, const QString& target_code,
                               const QString& extension = {});

/// Throws mtdesk::FileError naming `source_path` when no file can be created in its folder
/// (permissions, a read-only mount), where its translation goes: checked before translating,
/// so that the time is not spent for nothing.
void check_output_folder(const QString& source_path);

/// Writes `data` to `path` atomically: into a new temporary file next to it, synced, then
/// renamed to `path` in one step that fails when `path` exists (renameat2 RENAME_NOREPLACE),
/// so no file is ever replaced, nor written through a symbolic link, even one created
/// meanwhile. Throws mtdesk::FileError naming the file.
void write_new_file_atomically(const QString& path, const QByteArray& data);

}  // namespace mtdesk::app

// damaris::model::ModifyModel: a Damaris XML configuration kept as text, filled in from a
// template by regular-expression replacement, saved to a file for damaris_initialize().
//
// Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
//
// This is the class of Damaris 1.9+ that OPM Flow (opm-simulators, DamarisOutputModule.cpp)
// and PDI's Damaris plugin use, with the members they call, spelling included
// (RepalceWithRegEx). The usual sequence, as OPM Flow runs it:
//
//   std::string text = my_template();            // "<dedicated cores=\"_DC_REGEX_\" .../>"
//   damaris::model::ModifyModel mod = damaris::model::ModifyModel(text);
//   mod.RepalceWithRegEx({{"_DC_REGEX_", "1"}, {"_PATH_REGEX_", out_dir}});
//   if (rank == 0) mod.SaveXMLStringToFile(out_dir + "/damaris_config.xml");
//   damaris_initialize((out_dir + "/damaris_config.xml").c_str(), comm);
//
// damaris_initialize() reads the file on the first rank only, so rank 0 may write it just
// before the call.
//
// Replacement rules (those of Damaris, so that a template gives the same text):
// - RepalceWithRegEx applies the map's entries in the map's order (std::map: sorted keys), each
//   to the text the previous one left.
// - A key is an ECMAScript regular expression ("." "(" "[" "*" "+" "?" "\\" "^" "$" "|" "{" are
//   special: escape them with a backslash to match them literally). A match must start at a
//   word boundary (ECMAScript \b): a key starting with a letter, digit or '_' is replaced only
//   where the character before it is none of these ("x_DC_REGEX_" stays, "\"_DC_REGEX_" and
//   "/_DC_REGEX_" are replaced).
// - The value replaces the matched key; the characters after the key up to the next space
//   character ' ' (tabs and newlines do not stop it) are kept as they were. Damaris matches
//   them together with the key, so a key is replaced at most once in such a run: in
//   "_P_/a/_P_ _P_" the key _P_ is replaced twice (first and third), and in "_P_\n_P_" once.
// - The value is a std::regex_replace format: "$1" stands for the text the key matched and
//   "$$" for one '$' (write "$$" for a literal dollar sign). Unlike Damaris, a key with groups
//   of its own, "(a|b)", still keeps the text after it (Damaris then loses it).
// - Keys absent from the text change nothing; placeholders without a key stay in the text.
//
// Thread safety: an object may be used by one thread at a time; distinct objects are
// independent. Errors are reported by exceptions, as Damaris's class does (a C++ caller
// expects them; no exception leaves the C API of Damaris.h).
#ifndef SIDECORE_DAMARIS_MODEL_MODIFYMODEL_HPP
#define SIDECORE_DAMARIS_MODEL_MODIFYMODEL_HPP

#include <mpi.h>

#include <map>
#include <string>

namespace damaris {
namespace model {

class __attribute__((visibility("default"))) ModifyModel {
 public:
  // An empty configuration text (Damaris's default constructor holds a small test template;
  // PDI default-constructs and assigns ModifyModel(template) afterwards, which works the same).
  ModifyModel();

  // Keeps a copy of input_xml, the template to fill in.
  explicit ModifyModel(const std::string& input_xml);

  // Replaces the text by a copy of input_xml.
  void SetXMLstring(const std::string& input_xml);

  // Replaces, in the text, every key of find_and_replace by its value, with the rules above.
  // Throws std::invalid_argument naming the key when a key is not a valid regular expression;
  // the text is then left as it was before the call.
  void RepalceWithRegEx(const std::map<std::string, std::string>& find_and_replace);

  // The same, correctly spelt.
  void ReplaceWithRegEx(const std::map<std::string, std::string>& find_and_replace) {
    RepalceWithRegEx(find_and_replace);
  }

  // The current text. The reference stays valid until the object is modified or destroyed;
  // the non-const one lets the caller edit the text in place, as Damaris's does.
  std::string& GetConfigString();
  const std::string& GetConfigString() const;

  // Writes the current text to filename (replacing the file). Throws std::system_error whose
  // what() names the file and the reason (no such directory, permission denied, disk full...).
  // Not collective: call it on one rank.
  void SaveXMLStringToFile(const std::string& filename) const;

  // Collective over comm: the first rank reads the file at uri and every rank of comm gets its
  // content as the text. Returns true on every rank when the file was read; false on every
  // rank (the text unchanged) when the first rank could not read it. Throws std::runtime_error
  // when an MPI call fails.
  bool ReadAndBroadcastXMLFromFile(const MPI_Comm& comm, const std::string& uri);

 private:
  std::string m_text;
};

}  // namespace model
}  // namespace damaris

#endif  // SIDECORE_DAMARIS_MODEL_MODIFYMODEL_HPP

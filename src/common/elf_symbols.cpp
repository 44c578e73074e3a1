// Every offset and size read from the file is checked against the file's size before use: the
// file may be anything, truncated or hostile.
#include "common/elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace sidecore {
namespace {

// The file, mapped read-only for as long as it is read.
class mapped_file {
 public:
  explicit mapped_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p =
          ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        m_data = static_cast<const unsigned char*>(p);
        m_size = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~mapped_file() {
    if (m_data) ::munmap(const_cast<unsigned char*>(m_data), m_size);
  }
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  // A copy of the T at offset, when the file holds all of it.
  template <typename T>
  std::optional<T> read(std::uint64_t offset) const {
    if (!m_data || offset > m_size || m_size - offset < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, m_data + offset, sizeof(T));
    return value;
  }
  // Whether [offset, offset + size) lies inside the file.
  bool holds(std::uint64_t offset, std::uint64_t size) const {
    return m_data && offset <= m_size && size <= m_size - offset;
  }
  const unsigned char* data() const { return m_data; }

 private:
  const unsigned char* m_data = nullptr;
  std::size_t m_size = 0;
};

bool native_little_endian() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// The file's ELF header, when it is a 64-bit ELF library or program of this byte order with a
// section table.
std::optional<Elf64_Ehdr> elf_header(const mapped_file& file) {
  const auto header = file.read<Elf64_Ehdr>(0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_ident[EI_DATA] != (native_little_endian() ? ELFDATA2LSB : ELFDATA2MSB) ||
      (header->e_type != ET_DYN && header->e_type != ET_EXEC) ||
      header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shnum == 0)
    return std::nullopt;
  return header;
}

}  // namespace

std::optional<elf_search_paths> elf_library_search_paths(const std::string& path) {
  const mapped_file file(path);
  const auto header = elf_header(file);
  if (!header) return std::nullopt;
  const auto section = [&](std::uint64_t index) {
    return file.read<Elf64_Shdr>(header->e_shoff + index * sizeof(Elf64_Shdr));
  };
  elf_search_paths paths;
  for (std::uint64_t i = 0; i < header->e_shnum; ++i) {
    const auto dynamic = section(i);
    if (!dynamic) return std::nullopt;
    if (dynamic->sh_type != SHT_DYNAMIC) continue;
    const auto names = section(dynamic->sh_link);
    if (!names || names->sh_type != SHT_STRTAB || !file.holds(names->sh_offset, names->sh_size) ||
        !file.holds(dynamic->sh_offset, dynamic->sh_size))
      return std::nullopt;
    const char* strings = reinterpret_cast<const char*>(file.data() + names->sh_offset);
    const std::uint64_t entries = dynamic->sh_size / sizeof(Elf64_Dyn);
    for (std::uint64_t e = 0; e < entries; ++e) {
      const auto entry = file.read<Elf64_Dyn>(dynamic->sh_offset + e * sizeof(Elf64_Dyn));
      if (!entry || entry->d_tag == DT_NULL) break;
      if (entry->d_tag != DT_RPATH && entry->d_tag != DT_RUNPATH) continue;
      if (entry->d_un.d_val >= names->sh_size) return std::nullopt;
      const std::size_t room = names->sh_size - entry->d_un.d_val;
      std::string value(strings + entry->d_un.d_val, strnlen(strings + entry->d_un.d_val, room));
      (entry->d_tag == DT_RPATH ? paths.rpath : paths.runpath) = std::move(value);
    }
  }
  return paths;
}

std::optional<bool> elf_defines_function(const std::string& path, std::string_view symbol) {
  const mapped_file file(path);
  const auto header = elf_header(file);
  if (!header || header->e_type != ET_DYN) return std::nullopt;
  const auto section = [&](std::uint64_t index) {
    return file.read<Elf64_Shdr>(header->e_shoff + index * sizeof(Elf64_Shdr));
  };
  bool has_table = false;
  for (std::uint64_t i = 0; i < header->e_shnum; ++i) {
    const auto table = section(i);
    if (!table) return std::nullopt;
    if (table->sh_type != SHT_DYNSYM) continue;
    const auto names = section(table->sh_link);
    if (!names || names->sh_type != SHT_STRTAB || !file.holds(names->sh_offset, names->sh_size) ||
        !file.holds(table->sh_offset, table->sh_size))
      return std::nullopt;
    has_table = true;
    const char* strings = reinterpret_cast<const char*>(file.data() + names->sh_offset);
    const std::uint64_t symbols = table->sh_size / sizeof(Elf64_Sym);
    for (std::uint64_t s = 0; s < symbols; ++s) {
      const auto sym = file.read<Elf64_Sym>(table->sh_offset + s * sizeof(Elf64_Sym));
      if (!sym || sym->st_name >= names->sh_size) continue;
      const std::size_t room = names->sh_size - sym->st_name;
      const std::string_view name(strings + sym->st_name, strnlen(strings + sym->st_name, room));
      if (name != symbol) continue;
      const unsigned binding = ELF64_ST_BIND(sym->st_info);
      if (sym->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
          (binding == STB_GLOBAL || binding == STB_WEAK))
        return true;
    }
  }
  if (!has_table) return std::nullopt;
  return false;
}

}  // namespace sidecore

// Integer expressions over parameters: a recursive-descent parser and an overflow-checked
// evaluator.
#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "common/error.hpp"
#include "config/model.hpp"

namespace sidecore::config {

struct expression::node {
  enum class kind { constant, parameter, negate, add, subtract, multiply, divide, modulo };
  kind op = kind::constant;
  std::int64_t value = 0;  // constant
  std::size_t index = 0;   // parameter
  std::string name;        // parameter, for messages
  std::shared_ptr<const node> lhs;
  std::shared_ptr<const node> rhs;
};

namespace {

using node_ptr = std::shared_ptr<const expression::node>;
using kind = expression::node::kind;

std::string prefix(const std::string& where) {
  return where.empty() ? std::string() : where + ": ";
}

[[noreturn]] void fail_evaluation(const std::string& where, const std::string& text,
                                  const std::string& what, const std::string& hint) {
  throw config_error(prefix(where) + what + " in expression '" + text + "'; " + hint);
}

std::int64_t evaluate_node(const expression::node& n, const std::vector<std::int64_t>& values,
                           const std::string& text, const std::string& where) {
  switch (n.op) {
    case kind::constant:
      return n.value;
    case kind::parameter:
      if (n.index >= values.size()) {
        fail_evaluation(where, text, "no value for parameter '" + n.name + "'",
                        "pass one value per parameter of the model");
      }
      return values[n.index];
    case kind::negate: {
      const std::int64_t v = evaluate_node(*n.lhs, values, text, where);
      if (v == std::numeric_limits<std::int64_t>::min()) {
        fail_evaluation(where, text, "integer overflow", "results must fit in 64 bits");
      }
      return -v;
    }
    default:
      break;
  }
  const std::int64_t a = evaluate_node(*n.lhs, values, text, where);
  const std::int64_t b = evaluate_node(*n.rhs, values, text, where);
  std::int64_t result = 0;
  bool overflow = false;
  switch (n.op) {
    case kind::add:
      overflow = __builtin_add_overflow(a, b, &result);
      break;
    case kind::subtract:
      overflow = __builtin_sub_overflow(a, b, &result);
      break;
    case kind::multiply:
      overflow = __builtin_mul_overflow(a, b, &result);
      break;
    case kind::divide:
    case kind::modulo:
      if (b == 0) {
        fail_evaluation(where, text, n.op == kind::divide ? "division by zero" : "modulo by zero",
                        "the divisor must be non-zero with the current parameter values");
      }
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        overflow = true;
        break;
      }
      result = n.op == kind::divide ? a / b : a % b;
      break;
    default:
      break;
  }
  if (overflow) {
    fail_evaluation(where, text, "integer overflow", "results must fit in 64 bits");
  }
  return result;
}

void collect_parameters(const expression::node& n, std::set<std::size_t>& out) {
  if (n.op == kind::parameter) out.insert(n.index);
  if (n.lhs) collect_parameters(*n.lhs, out);
  if (n.rhs) collect_parameters(*n.rhs, out);
}

// Grammar: sum := product (('+'|'-') product)*
//          product := unary (('*'|'/'|'%') unary)*
//          unary := ('-'|'+') unary | primary
//          primary := integer | name | '(' sum ')'
class parser {
 public:
  parser(std::string_view text, const std::map<std::string, std::size_t, std::less<>>& names,
         const std::string& where, const unusable_name_reason& why_unusable)
      : m_text(text), m_names(names), m_where(where), m_why_unusable(why_unusable) {}

  node_ptr parse() {
    skip_spaces();
    if (m_pos == m_text.size()) {
      throw config_error(prefix(m_where) + "empty expression; expected an integer expression " +
                         "over parameters such as '64' or 'WIDTH*2'");
    }
    node_ptr root = sum();
    skip_spaces();
    if (m_pos != m_text.size()) syntax_error("an operator (+ - * / %) or the end");
    return root;
  }

 private:
  static constexpr int max_depth = 200;
  // Evaluating, walking and freeing the tree recurse along chains such as 1+1+...+1: bounding
  // the operators bounds the depth of those recursions (400,000 terms overflowed the stack).
  static constexpr int max_operators = 1000;

  void skip_spaces() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) {
      ++m_pos;
    }
  }

  char peek() {
    skip_spaces();
    return m_pos < m_text.size() ? m_text[m_pos] : '\0';
  }

  [[noreturn]] void syntax_error(const std::string& expected) {
    std::string found =
        m_pos < m_text.size() ? "'" + std::string(1, m_text[m_pos]) + "'" : std::string("the end");
    throw config_error(prefix(m_where) + "syntax error in expression '" + std::string(m_text) +
                       "' at column " + std::to_string(m_pos + 1) + ": found " + found +
                       "; expected " + expected);
  }

  node_ptr binary(kind op, node_ptr lhs, node_ptr rhs) {
    if (++m_operators > max_operators) {
      throw config_error(prefix(m_where) + "expression of more than " +
                         std::to_string(max_operators) + " operators (column " +
                         std::to_string(m_pos) + " of " + std::to_string(m_text.size()) +
                         "); dimensions and values are short expressions such as 'NX*2+1'");
    }
    auto n = std::make_shared<expression::node>();
    n->op = op;
    n->lhs = std::move(lhs);
    n->rhs = std::move(rhs);
    return n;
  }

  node_ptr sum() {
    node_ptr lhs = product();
    for (char c = peek(); c == '+' || c == '-'; c = peek()) {
      ++m_pos;
      lhs = binary(c == '+' ? kind::add : kind::subtract, lhs, product());
    }
    return lhs;
  }

  node_ptr product() {
    node_ptr lhs = unary();
    for (char c = peek(); c == '*' || c == '/' || c == '%'; c = peek()) {
      ++m_pos;
      const kind op = c == '*' ? kind::multiply : c == '/' ? kind::divide : kind::modulo;
      lhs = binary(op, lhs, unary());
    }
    return lhs;
  }

  node_ptr unary() {
    if (++m_depth > max_depth) syntax_error("an expression nested less deeply");
    node_ptr result;
    const char c = peek();
    if (c == '-') {
      ++m_pos;
      auto n = std::make_shared<expression::node>();
      n->op = kind::negate;
      n->lhs = unary();
      result = n;
    } else if (c == '+') {
      ++m_pos;
      result = unary();
    } else {
      result = primary();
    }
    --m_depth;
    return result;
  }

  node_ptr primary() {
    const char c = peek();
    if (c == '(') {
      ++m_pos;
      node_ptr inner = sum();
      if (peek() != ')') syntax_error("')'");
      ++m_pos;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    syntax_error("a number, a parameter name or '('");
  }

  node_ptr number() {
    std::int64_t value = 0;
    while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
      const int digit = m_text[m_pos] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, digit, &value)) {
        throw config_error(prefix(m_where) + "integer literal too large in expression '" +
                           std::string(m_text) + "'; integers must fit in 64 bits");
      }
      ++m_pos;
    }
    if (m_pos < m_text.size() && (std::isalpha(static_cast<unsigned char>(m_text[m_pos])) ||
                                  m_text[m_pos] == '_' || m_text[m_pos] == '.')) {
      syntax_error("an integer (expressions are integer arithmetic only)");
    }
    auto n = std::make_shared<expression::node>();
    n->value = value;
    return n;
  }

  node_ptr name() {
    const std::size_t start = m_pos;
    while (m_pos < m_text.size() &&
           (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_')) {
      ++m_pos;
    }
    const std::string_view id = m_text.substr(start, m_pos - start);
    const auto found = m_names.find(id);
    if (found == m_names.end()) {
      if (m_why_unusable) {
        const std::string reason = m_why_unusable(id);
        if (!reason.empty()) throw config_error(prefix(m_where) + reason);
      }
      std::vector<std::string> known;
      for (const auto& entry : m_names) known.push_back(entry.first);
      const std::string hint = known.empty() ? std::string("no parameter is defined here")
                                             : detail::suggest(id, known, "parameters");
      throw config_error(prefix(m_where) + "unknown parameter '" + std::string(id) +
                         "' in expression '" + std::string(m_text) + "'; " + hint);
    }
    auto n = std::make_shared<expression::node>();
    n->op = kind::parameter;
    n->index = found->second;
    n->name = found->first;
    return n;
  }

  std::string_view m_text;
  const std::map<std::string, std::size_t, std::less<>>& m_names;
  const std::string& m_where;
  const unusable_name_reason& m_why_unusable;
  std::size_t m_pos = 0;
  int m_depth = 0;
  int m_operators = 0;
};

}  // namespace

expression::expression() : m_root(std::make_shared<node>()), m_text("0") {}

expression::expression(std::shared_ptr<const node> root, std::string text)
    : m_root(std::move(root)), m_text(std::move(text)) {}

expression::expression(std::shared_ptr<const node> root, std::string text, std::string where)
    : m_root(std::move(root)), m_text(std::move(text)), m_where(std::move(where)) {}

std::int64_t expression::evaluate(const std::vector<std::int64_t>& parameter_values) const {
  if (!m_root) return 0;
  return evaluate_node(*m_root, parameter_values, m_text, m_where);
}

std::vector<std::size_t> expression::parameters() const {
  std::set<std::size_t> found;
  if (m_root) collect_parameters(*m_root, found);
  return {found.begin(), found.end()};
}

expression parse_expression(std::string_view text,
                            const std::map<std::string, std::size_t, std::less<>>& names,
                            const std::string& where, const unusable_name_reason& why_unusable) {
  parser p(text, names, where, why_unusable);
  node_ptr root = p.parse();
  // Keep the text as written, minus surrounding spaces, for messages and round trips.
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return expression(std::move(root), std::string(text.substr(first, last - first + 1)), where);
}

}  // namespace sidecore::config

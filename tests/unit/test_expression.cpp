// Integer expressions of layouts: precedence, parameters and every error message.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "config/model.hpp"

namespace {

using sidecore::config::parse_expression;
using names_t = std::map<std::string, std::size_t, std::less<>>;

const names_t parameter_names = {{"WIDTH", 0}, {"HEIGHT", 1}, {"size", 2}};
const std::vector<std::int64_t> parameter_values = {16, 8, 4};

std::int64_t eval(const std::string& text) {
  return parse_expression(text, parameter_names, "test.xml:7").evaluate(parameter_values);
}

std::string expression_parse_error(const std::string& text) {
  try {
    parse_expression(text, parameter_names, "test.xml:7");
  } catch (const sidecore::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

std::string evaluation_error(const std::string& text) {
  try {
    eval(text);
  } catch (const sidecore::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

TEST(expression, integers_and_parameters) {
  EXPECT_EQ(eval("42"), 42);
  EXPECT_EQ(eval("WIDTH"), 16);
  EXPECT_EQ(eval(" WIDTH / size "), 4);
  EXPECT_EQ(eval("9223372036854775807"), INT64_MAX);
}

TEST(expression, multiplication_binds_tighter_than_addition) {
  EXPECT_EQ(eval("2+3*4"), 14);
  EXPECT_EQ(eval("2*3+4"), 10);
  EXPECT_EQ(eval("20-6/2"), 17);
  EXPECT_EQ(eval("WIDTH+HEIGHT%3"), 18);
}

TEST(expression, operators_of_equal_precedence_group_left_to_right) {
  EXPECT_EQ(eval("10-4-3"), 3);
  EXPECT_EQ(eval("64/4/2"), 8);
  EXPECT_EQ(eval("17%5*2"), 4);
}

TEST(expression, parentheses_override_precedence) {
  EXPECT_EQ(eval("(2+3)*4"), 20);
  EXPECT_EQ(eval("((WIDTH))"), 16);
  EXPECT_EQ(eval("WIDTH/(size/2)"), 8);
}

TEST(expression, unary_minus_and_plus) {
  EXPECT_EQ(eval("-3"), -3);
  EXPECT_EQ(eval("--3"), 3);
  EXPECT_EQ(eval("-WIDTH+20"), 4);
  EXPECT_EQ(eval("2*-3"), -6);
  EXPECT_EQ(eval("+5"), 5);
  EXPECT_EQ(eval("-(2+3)"), -5);
}

TEST(expression, division_and_modulo_truncate_toward_zero) {
  EXPECT_EQ(eval("7/2"), 3);
  EXPECT_EQ(eval("-7/2"), -3);
  EXPECT_EQ(eval("7%3"), 1);
  EXPECT_EQ(eval("-7%3"), -1);
}

TEST(expression, lists_the_parameters_it_reads_once) {
  const auto e = parse_expression("WIDTH*size+WIDTH", parameter_names, "test.xml:7");
  EXPECT_EQ(e.parameters(), (std::vector<std::size_t>{0, 2}));
  EXPECT_TRUE(parse_expression("3*4", parameter_names, "").parameters().empty());
  EXPECT_EQ(e.text(), "WIDTH*size+WIDTH");
  EXPECT_EQ(e.where(), "test.xml:7");
}

TEST(expression, default_is_constant_zero) {
  const sidecore::config::expression e;
  EXPECT_EQ(e.evaluate({}), 0);
  EXPECT_TRUE(e.parameters().empty());
}

TEST(expression, evaluation_follows_new_parameter_values) {
  const auto e = parse_expression("WIDTH/size", parameter_names, "test.xml:7");
  EXPECT_EQ(e.evaluate({16, 8, 4}), 4);
  EXPECT_EQ(e.evaluate({16, 8, 2}), 8);
}

TEST(expression, division_by_zero_names_place_and_expression) {
  const std::string message = evaluation_error("WIDTH/(size-4)");
  EXPECT_NE(message.find("test.xml:7"), std::string::npos) << message;
  EXPECT_NE(message.find("division by zero"), std::string::npos) << message;
  EXPECT_NE(message.find("WIDTH/(size-4)"), std::string::npos) << message;
}

TEST(expression, modulo_by_zero_is_an_error) {
  const std::string message = evaluation_error("WIDTH%0");
  EXPECT_NE(message.find("test.xml:7"), std::string::npos) << message;
  EXPECT_NE(message.find("modulo by zero"), std::string::npos) << message;
}

TEST(expression, overflow_is_an_error) {
  EXPECT_NE(evaluation_error("9223372036854775807+1").find("overflow"), std::string::npos);
  EXPECT_NE(evaluation_error("-9223372036854775807-2").find("overflow"), std::string::npos);
  EXPECT_NE(expression_parse_error("99999999999999999999").find("too large"), std::string::npos);
}

TEST(expression, unknown_parameter_suggests_nearest_name) {
  const std::string message = expression_parse_error("WIDHT*2");
  EXPECT_NE(message.find("test.xml:7"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown parameter 'WIDHT'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'WIDTH'?"), std::string::npos) << message;
  EXPECT_NE(message.find("valid parameters: HEIGHT, WIDTH, size"), std::string::npos) << message;
}

TEST(expression, unknown_parameter_without_any_defined) {
  try {
    parse_expression("N", {}, "a.xml:3");
    FAIL() << "no error";
  } catch (const sidecore::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("a.xml:3: unknown parameter 'N'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no parameter is defined"), std::string::npos);
  }
}

TEST(expression, syntax_errors_name_place_and_column) {
  for (const char* bad : {"2+", "2**3", "(2+3", "2+3)", "WIDTH HEIGHT", "3.5", "2x", "size-$"}) {
    const std::string message = expression_parse_error(bad);
    EXPECT_EQ(message.rfind("test.xml:7: syntax error in expression", 0), 0u) << message;
    EXPECT_NE(message.find("; expected"), std::string::npos) << message;
  }
  EXPECT_NE(expression_parse_error("2**3").find("column 3"), std::string::npos);
}

TEST(expression, empty_text_is_an_error) {
  for (const char* bad : {"", "   "}) {
    const std::string message = expression_parse_error(bad);
    EXPECT_NE(message.find("test.xml:7: empty expression"), std::string::npos) << message;
  }
}

TEST(expression, deep_nesting_is_refused_not_a_crash) {
  const std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_NE(expression_parse_error(deep).find("syntax error"), std::string::npos);
}

}  // namespace

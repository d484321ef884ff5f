// parasim's entry point: the one place where errors become exit codes.
#include <iostream>

#include "cli/commands.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  try {
    return parasim::cli::run(argc, argv, std::cout, std::cerr);
  } catch (const parasim::InputError& e) {
    std::cerr << "parasim: error: " << e.what() << "\n";
    return 2;
  } catch (const parasim::PlanError& e) {
    std::cerr << "parasim: the plan cannot run: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "parasim: internal error: " << e.what() << "\n";
    return 1;
  }
}

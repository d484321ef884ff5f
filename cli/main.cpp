// parasim's entry point: the one place where errors become exit codes — 0 success, 2 bad input,
// 3 the plan cannot run, 4 an output cannot be written, 1 internal error (out of memory included); a run stopped from outside exits
// 130 (SIGINT), 143 (SIGTERM) or 124 (--timeout) after removing its unfinished outputs
// (cli/output_files.hpp).
#include <iostream>
#include <new>

#include "cli/commands.hpp"
#include "cli/output_files.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  parasim::cli::install_interrupt_handlers();
  try {
    return parasim::cli::run(argc, argv, std::cout, std::cerr);
  } catch (const parasim::InputError& e) {
    std::cerr << "parasim: error: " << e.what() << "\n";
    return 2;
  } catch (const parasim::PlanError& e) {
    std::cerr << "parasim: the plan cannot run: " << e.what() << "\n";
    return 3;
  } catch (const parasim::OutputError& e) {
    std::cerr << "parasim: cannot write the outputs: " << e.what() << "\n";
    return 4;
  } catch (const std::bad_alloc&) {
    std::cerr << "parasim: internal error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "parasim: internal error: " << e.what() << "\n";
    return 1;
  }
}

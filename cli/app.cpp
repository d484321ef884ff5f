#include "cli/commands.hpp"
#include "cli/validators.hpp"

#include "cli/output_files.hpp"
#include "common/error.hpp"

namespace parasim::cli {

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"parasim: simulate distributed deep-learning training plans on modeled GPU and TPU clusters"};
  app.set_version_flag("--version", std::string("parasim ") + PARASIM_VERSION);
  app.require_subcommand(0, 1);
  Action action;
  add_run_command(app, action, out);
  add_model_command(app, action, out);
  add_search_command(app, action, out);
  add_report_command(app, action, out);
  add_calibrate_command(app, action, out, err);
  add_execute_command(app, action, out);
  add_data_command(app, action, out);
  // --timeout on the command and on every sub-command, so it may follow any of them.
  double timeout_s = 0;
  const std::string timeout_help = "stop after this many seconds of wall-clock time: exit 124, unfinished outputs removed (0: no limit)";
  app.add_option("--timeout", timeout_s, timeout_help)->check(number_at_least(0));
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->add_option("--timeout", timeout_s, timeout_help)->check(number_at_least(0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help and --version arrive as exceptions derived from Success; CLI11 prints them in exit().
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    throw InputError("<command line>", 0, 0, "", e.what());
  }
  if (!action) {
    out << app.help();
    return 0;
  }
  arm_timeout(timeout_s);
  struct Disarm {
    ~Disarm() { arm_timeout(0); }  // a caller in the same process (the tests) outlives the command
  } disarm;
  return action();
}

}  // namespace parasim::cli

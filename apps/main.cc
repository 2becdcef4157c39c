#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"abyss: a main-memory OLTP engine for evaluating concurrency control"};
  app.require_subcommand(1);
  app.add_subcommand("version", "print the build's git revision and type")->callback([] {
    std::printf("abyss %s (%s)\n", ABYSS_GIT_REV, ABYSS_BUILD_TYPE);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return 0;
}

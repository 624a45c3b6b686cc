"""What the calibration scripts share when they reduce a measurement run to the text table the engine embeds
(data/calibration/*.tsv): the '#' header lines, writing the file, the `--table IN OUT` entry and `--key=value`
options."""


def header(title, env, columns):
    """Three comment lines: what the table is, the run's environment (key=value, spaces as '_'), the columns."""
    return ["# " + title, "# " + " ".join(f"{k}={str(v).replace(' ', '_')}" for k, v in env.items()), "# " + columns]


def write(out_path, lines):
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


def table_mode(argv, write_table):
    """`SCRIPT --table IN OUT`: reduce IN to the table OUT (no GPU). True when handled."""
    if len(argv) > 1 and argv[1] == "--table":
        write_table(argv[2], argv[3])
        return True
    return False


def options(argv):
    """The `--key=value` arguments as a dict."""
    return {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv if "=" in a}

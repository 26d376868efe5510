"""Convert one of Weka's example ARFF files to the CSV layout of treekit's bundled data sets
(header row, last column ``class``, ``?`` for a missing value). Standard library only.

    python scripts/arff_to_csv.py /usr/share/doc/weka/examples/vote.arff \
        treekit_core/datasets/data/vote.csv

Used once to make vote.csv and labor.csv from Debian's ``weka`` 3.6.14 package (see
treekit_core/datasets/data/PROVENANCE.md). The class attribute must be the last one; it is
renamed ``class``.
"""

import csv
import sys


def parse_values(line):
    """Split an ARFF data line on commas outside quotes; strip quotes."""
    reader = csv.reader([line], quotechar="'", skipinitialspace=True)
    return [v.strip() for v in next(reader)]


def main(source, target):
    names, rows, in_data = [], [], False
    with open(source, encoding="utf-8") as handle:
        for raw in handle:
            line = raw.strip()
            if not line or line.startswith("%"):
                continue
            lowered = line.lower()
            if lowered.startswith("@attribute"):
                rest = line[len("@attribute") :].strip()
                name = rest[1 : rest.index("'", 1)] if rest.startswith("'") else rest.split()[0]
                names.append(name)
            elif lowered.startswith("@data"):
                in_data = True
            elif in_data:
                values = parse_values(line)
                if len(values) != len(names):
                    sys.exit(f"a data line has {len(values)} values for {len(names)} attributes")
                rows.append(values)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names[:-1] + ["class"])
        writer.writerows(rows)
    print(f"{target}: {len(rows)} rows x {len(names) - 1} features", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:3])

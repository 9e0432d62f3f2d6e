"""The README's performance table and chart, from one run of the benchmarks.

Reads what `readme-performance` (next to this file) saved: the JSON of `katana-benchmarks --json` (timings,
and the targets it checked) and the allocation counts of the `Benchmarks/` package (package-benchmark's
`thresholds update` files, one `StoreBenchmarks.<identifier>.p90.json` per case, counts per run of 1,000
operations). Draws `Sources/Katana/Katana.docc/Resources/benchmarks.svg` with matplotlib and rewrites the tables
between the `performance-table` markers of README.md and of the Performance article.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ARTICLE = ROOT / "Sources/Katana/Katana.docc/Performance.md"
CHART = ROOT / "Sources/Katana/Katana.docc/Resources/benchmarks.svg"

BEGIN_MARKER = "<!-- performance-table:begin"
END_MARKER = "<!-- performance-table:end -->"

ACTOR_CALL = "baseline: bare actor call"
REPEAT_SUFFIX = re.compile(r" \([a-z]+ group\)$")
# Operations in one run of a package-benchmark case (`scalingFactor: .kilo` in Benchmarks/).
OPERATIONS_PER_RUN = 1_000

# The README's rows: the case's name in katana-benchmarks, and what the README calls it.
README_ROWS: list[tuple[str, str]] = [
    (ACTOR_CALL, "bare actor call (baseline)"),
    ("dispatch: state updater", "`try await store.dispatch(updater)`"),
    ("dispatch: empty side effect", "`try await store.dispatch(emptySideEffect)`"),
    ("dispatch: returning side effect", "`let v = try await store.dispatch(returning)`"),
    ("dispatch: nested updater from a side effect", "side effect awaiting a nested updater"),
    ("send: state updater throughput", "`store.send(updater)`, per item"),
    ("concurrent: 8 tasks dispatching", "8 tasks dispatching at once, per dispatch"),
    ("baseline: 5 plain async closures", "5 plain async closure calls (baseline)"),
    ("dispatch: state updater, 5 interceptors", "updater through 5 pass-through interceptors"),
    ("dispatch: state updater, 5 dispatch interceptors", "the same, 5 `DispatchInterceptor`s (the faster form)"),
    ("dispatch: state updater, 5 observers", "updater with 5 dispatch observers (the observe-only form)"),
    ("append: 1,000,000 elements, no observer", "append to a 1,000,000-element array, no observer"),
    ("append: 1,000,000 elements, 10 projections", "the same, with 10 projection streams of other fields"),
    ("append: 1,000,000 elements, one listener", "the same, with one listener (it copies the array)"),
    ("scope: root dispatch (reference)", "`try await store.dispatch(updater)` on the scope cases' app store"),
    ("scope: dispatch through a scope", "`try await feature.dispatch(updater)`, through one scope"),
    ("scope: dispatch through three nested scopes", "the same, through three nested scopes"),
    ("scope: append, 1,000,000 elements in the feature", "append to a 1,000,000-element array in a feature"),
    ("scope: feature commit, 10 listeners on other features", "a feature's commit, listeners on 10 other features"),
    ("baseline: main-queue round trip", "bare main-queue round trip (baseline)"),
    ("promise: awaited dispatch", "`store.dispatch(updater).then { }` (KatanaPromises), awaited from a task"),
    ("baseline: main-queue posts, pipelined", "bare main-queue post (baseline)"),
    ("promise: pipelined dispatch", "`store.dispatch(updater).then { }`, issued back to back, per dispatch"),
    ("promise: Hydra.await round trip, state updater", "`try Hydra.await(store.dispatch(updater))` on a thread"),
]

# The append panel of the chart: (label, the 10-element case, the 1,000,000-element case).
APPEND_GROUPS: list[tuple[str, str, str]] = [
    ("no observer", "append: 10 elements, no observer", "append: 1,000,000 elements, no observer"),
    ("10 projections", "append: 10 elements, 10 projections", "append: 1,000,000 elements, 10 projections"),
    ("one listener", "append: 10 elements, one listener", "append: 1,000,000 elements, one listener"),
    (
        "in a scoped feature",
        "scope: append, 10 elements in the feature",
        "scope: append, 1,000,000 elements in the feature",
    ),
]

BASELINE_COLOR = "#9aa5b1"
CASE_COLOR = "#2b6cb0"
TARGET_COLOR = "#c53030"
SMALL_COLOR = "#68d391"
LARGE_COLOR = "#2f855a"


@dataclass(frozen=True)
class Measurement:
    name: str
    is_baseline: bool
    unit: str  # "ns/op", or "MB" for the memory case
    median: float


@dataclass(frozen=True)
class TargetCheck:
    target: str
    measured: str
    met: bool


@dataclass(frozen=True)
class Run:
    """One run: katana-benchmarks' report and the allocation counts of the same cases."""

    processors: int
    operating_system: str
    batches: int
    toolchain: str
    measurements: list[Measurement]
    targets: list[TargetCheck]
    allocations: dict[str, float]  # per operation, by package-benchmark identifier

    def measurement(self, name: str) -> Measurement:
        for measurement in self.measurements:
            if measurement.name == name:
                return measurement
        raise LookupError(f'the run has no case named "{name}" (was it renamed? update {Path(__file__).name})')

    def value(self, name: str) -> float:
        return self.measurement(name).median

    def allocations_per_operation(self, name: str) -> float | None:
        """The count of the package-benchmark case that `name` is, or repeats ("X (interceptor group)" is X
        measured again next to another group)."""
        return self.allocations.get(identifier(REPEAT_SUFFIX.sub("", name)))


def identifier(name: str) -> str:
    """A case's name in the Benchmarks/ package, as `BenchmarkFixture.identifier` makes it: lower case, commas
    dropped, every other run of characters that are not ASCII letters or digits one hyphen."""
    result = ""
    for character in name.lower():
        if character == ",":
            continue
        if character.isascii() and character.isalnum():
            result += character
        elif result and not result.endswith("-"):
            result += "-"
    return result.removesuffix("-")


def load_run(report_path: Path, allocations_path: Path, toolchain: str) -> Run:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    measurements = [
        Measurement(
            name=entry["name"],
            is_baseline=entry["kind"] == "baseline",
            unit=entry["unit"],
            median=statistics.median(entry["stats"]["samples"]),
        )
        for entry in report["measurements"]
    ]
    targets = [TargetCheck(entry["target"], entry["measured"], entry["met"]) for entry in report["targets"]]
    allocations: dict[str, float] = {}
    for path in sorted(allocations_path.glob("StoreBenchmarks.*.p90.json")):
        case = path.name.removeprefix("StoreBenchmarks.").removesuffix(".p90.json")
        count = json.loads(path.read_text(encoding="utf-8"))["mallocCountTotal"]
        allocations[case] = count / OPERATIONS_PER_RUN
    if not allocations:
        raise LookupError(f"no StoreBenchmarks.*.p90.json files in {allocations_path}")
    timed = {identifier(REPEAT_SUFFIX.sub("", measurement.name)) for measurement in measurements}
    for case in sorted(set(allocations) - timed):
        print(f"warning: package-benchmark case {case} matches no case of the katana-benchmarks run", file=sys.stderr)
    machine = report["machine"]
    return Run(
        processors=machine["processors"],
        operating_system=machine["operatingSystem"],
        batches=machine["batches"],
        toolchain=toolchain,
        measurements=measurements,
        targets=targets,
        allocations=allocations,
    )


# MARK: - Targets


@dataclass(frozen=True)
class Limit:
    """A SPEC section 7 target, as the most a case may cost in this run (ns per operation)."""

    case: str
    nanoseconds: Callable[[Run], float]


# SPEC section 7's targets, in nanoseconds computed from this run's own references, so that the chart can mark
# them on the case's bar. katana-benchmarks decides whether each is met (the JSON's targets, listed in the
# Performance article), from per-round ratios; these marks use medians.
LIMITS: list[Limit] = [
    Limit("dispatch: state updater", lambda run: 3 * run.value(ACTOR_CALL)),
    Limit("dispatch: empty side effect", lambda run: 10 * run.value(ACTOR_CALL)),
    # Five pass-through interceptors add at most twice what five plain async closure calls cost (to the plain
    # dispatch measured in the same group).
    Limit(
        "dispatch: state updater, 5 interceptors",
        lambda run: run.value("dispatch: state updater (interceptor group)")
        + 2 * run.value("baseline: 5 plain async closures"),
    ),
    Limit(
        "dispatch: state updater, 5 dispatch interceptors",
        lambda run: run.value("dispatch: state updater (interceptor group)")
        + 2 * run.value("baseline: 5 plain async closures"),
    ),
    # One pass-through interceptor costs at most a plain dispatch plus twice one plain async closure call.
    Limit(
        "dispatch: state updater, 1 pass-through interceptor",
        lambda run: run.value("dispatch: state updater (interceptor group)")
        + 2 * run.value("baseline: 1 plain async closure"),
    ),
    Limit(
        "dispatch: state updater, 1 dispatch interceptor",
        lambda run: run.value("dispatch: state updater (interceptor group)")
        + 2 * run.value("baseline: 1 plain async closure"),
    ),
    # Dispatch observers cost at most 20 ns each over the plain dispatch measured in the same group.
    Limit(
        "dispatch: state updater, 5 observers",
        lambda run: run.value("dispatch: state updater (interceptor group)") + 5 * 20,
    ),
    # Aggregate throughput at least 0.8x one task's: a dispatch costs at most 1 / 0.8 of one task's.
    Limit("concurrent: 8 tasks dispatching", lambda run: run.value("concurrent: 1 task (reference)") / 0.8),
    Limit("append: 1,000,000 elements, no observer", lambda run: 1.2 * run.value("append: 10 elements, no observer")),
    Limit(
        "append: 1,000,000 elements, 10 projections",
        lambda run: 1.2 * run.value("append: 10 elements, 10 projections"),
    ),
    Limit(
        "scope: append, 1,000,000 elements in the feature",
        lambda run: 1.2 * run.value("scope: append, 10 elements in the feature"),
    ),
    Limit("scope: dispatch through a scope", lambda run: 1.5 * run.value("scope: root dispatch (reference)")),
    Limit(
        "scope: dispatch through three nested scopes",
        lambda run: 2 * run.value("scope: root dispatch (reference)"),
    ),
    Limit("promise: awaited dispatch", lambda run: 1.2 * run.value("baseline: main-queue round trip")),
    Limit("promise: pipelined dispatch", lambda run: 2 * run.value("baseline: main-queue posts, pipelined")),
    Limit(
        "promise: 10 operations blocking in Hydra.await (.katana6)",
        lambda run: 2 * run.value("baseline: 10 operations blocking on a serial queue"),
    ),
]


def limits(run: Run) -> dict[str, float]:
    return {limit.case: limit.nanoseconds(run) for limit in LIMITS}


# MARK: - Formatting


def three_figures(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    if value < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def in_unit(nanoseconds: float) -> tuple[float, str]:
    """The value in ns, µs or ms, whichever keeps it under 1,000 (or ms)."""
    for unit, scale in (("ns", 1.0), ("µs", 1e3)):
        if nanoseconds < 1_000 * scale:
            return nanoseconds / scale, unit
    return nanoseconds / 1e6, "ms"


def duration(nanoseconds: float) -> str:
    value, unit = in_unit(nanoseconds)
    return f"{three_figures(value)} {unit}"


def ratio(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def allocation_text(per_operation: float | None) -> str:
    if per_operation is None:
        return "—"
    if per_operation == 0:
        return "0"
    return f"{per_operation:.3f}" if per_operation < 0.1 else f"{per_operation:.1f}"


def median_text(measurement: Measurement) -> str:
    return f"{measurement.median:.2f} MB" if measurement.unit == "MB" else duration(measurement.median)


def table(run: Run, rows: list[tuple[str, str]]) -> list[str]:
    actor_call = run.value(ACTOR_CALL)
    lines = ["| Case | Median | × actor call | Allocations per operation |", "| --- | ---: | ---: | ---: |"]
    for name, label in rows:
        measurement = run.measurement(name)
        times = ratio(measurement.median / actor_call) if measurement.unit == "ns/op" else ""
        allocations = allocation_text(run.allocations_per_operation(name))
        lines.append(f"| {label} | {median_text(measurement)} | {times} | {allocations} |")
    return lines


def paragraph(text: str, indent: str = "") -> str:
    """Wrapped at the width of the documents' prose."""
    return textwrap.fill(text, width=110, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def provenance(run: Run) -> str:
    return (
        f"One run of `Benchmarks/Report/readme-performance` on a {run.processors}-core machine "
        f"({run.operating_system}), {run.toolchain}: medians of {run.batches} batches of `katana-benchmarks`, their "
        "ratio to the bare actor call's median, and the allocations per operation that package-benchmark "
        "(`Benchmarks/`) counted in the same invocation."
    )


def readme_block(run: Run) -> list[str]:
    return [paragraph(provenance(run)), "", *table(run, README_ROWS)]


def article_block(run: Run) -> list[str]:
    rows = [(measurement.name, f"`{measurement.name}`") for measurement in run.measurements]
    lines = [
        paragraph(
            provenance(run) + " Every case of the run, in its order. Allocations are the 90th percentile of the "
            "case's runs of 1,000 operations, as `.ci/benchmark-thresholds` records them; a dash marks a case that "
            "package-benchmark does not run (a reference measured again next to another group, the memory case, "
            "the blocking cases, whose times are per round of ten operations)."
        ),
        "",
        *table(run, rows),
        "",
        "The targets that `katana-benchmarks` checked in that run (ratios are medians of per-round ratios):",
        "",
    ]
    for target in run.targets:
        verdict = "met" if target.met else "**not met**"
        lines.append(paragraph(f"- {verdict}: {target.target}; measured {target.measured}", indent="  "))
    return lines


def replace_block(path: Path, block: list[str]) -> None:
    text = path.read_text(encoding="utf-8")
    start = text.find(BEGIN_MARKER)
    end = text.find(END_MARKER)
    if start < 0 or end < start:
        raise LookupError(f"{path}: no {BEGIN_MARKER} … {END_MARKER} block")
    start = text.index("\n", start) + 1  # keep the marker's line
    path.write_text(text[:start] + "\n".join(block) + "\n" + text[end:], encoding="utf-8")


# MARK: - Chart


def draw_chart(run: Run, path: Path) -> None:
    cases = [
        measurement
        for measurement in run.measurements
        if measurement.unit == "ns/op"
        and not measurement.name.startswith(("append:", "scope: append"))
        and not REPEAT_SUFFIX.search(measurement.name)
    ]
    with rc_context(
        {
            "svg.hashsalt": "katana-benchmarks",  # stable element ids, so that a new run changes only its numbers
            "svg.fonttype": "none",  # text stays text: smaller, searchable, readable diffs
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
            "font.size": 9,
        }
    ):
        figure = Figure(figsize=(10, 0.22 * len(cases) + 0.5 * len(APPEND_GROUPS) + 2.5), layout="constrained")
        ratios_axes, append_axes = figure.subplots(2, 1, height_ratios=[len(cases) + 3, 2 * len(APPEND_GROUPS) + 3])
        draw_ratios(run, cases, ratios_axes)
        draw_appends(run, append_axes)
        figure.supxlabel(
            f"{run.processors} cores, {run.operating_system}, {run.toolchain}; medians of {run.batches} batches of "
            "katana-benchmarks. Drawn by Benchmarks/Report/readme-performance.",
            x=0.01,
            ha="left",
            fontsize=7,
            color="#666666",
        )
        figure.savefig(path, format="svg", metadata={"Date": None})


def draw_ratios(run: Run, cases: list[Measurement], axes: Axes) -> None:
    actor_call = run.value(ACTOR_CALL)
    marks = limits(run)
    for position, case in enumerate(cases):
        mark = marks.get(case.name)
        draw_bar(
            axes,
            position,
            case.median / actor_call,
            None if mark is None else mark / actor_call,
            f"{ratio(case.median / actor_call)}x",
            BASELINE_COLOR if case.is_baseline else CASE_COLOR,
            height=0.7,
        )
    style_axes(
        axes,
        [case.name for case in cases],
        lambda value: f"{value:,.0f}x" if value >= 1 else f"{value:g}x",
        "Cost of each case in bare actor calls (medians of one run, log scale)",
        [
            Patch(color=CASE_COLOR, label="case"),
            Patch(color=BASELINE_COLOR, label="baseline"),
            Line2D([], [], color=TARGET_COLOR, linewidth=2, label="SPEC 7 target, from this run's reference"),
        ],
    )


def draw_appends(run: Run, axes: Axes) -> None:
    marks = limits(run)
    for index, (_, small, large) in enumerate(APPEND_GROUPS):
        for offset, name, color in ((-0.2, small, SMALL_COLOR), (0.2, large, LARGE_COLOR)):
            value = run.value(name)
            draw_bar(axes, index + offset, value, marks.get(name), duration(value), color, height=0.38)
    style_axes(
        axes,
        [label for label, _, _ in APPEND_GROUPS],
        tick_duration,
        "Append to an array in the state, per dispatch (log scale)",
        [
            Patch(color=SMALL_COLOR, label="10 elements"),
            Patch(color=LARGE_COLOR, label="1,000,000 elements"),
            Line2D([], [], color=TARGET_COLOR, linewidth=2, label="target: 1.2x the 10-element cost"),
        ],
    )


def draw_bar(
    axes: Axes, position: float, value: float, mark: float | None, label: str, color: str, height: float
) -> None:
    """One bar, its value at its end (past the mark, if any) and its target mark."""
    axes.barh(position, value, height=height, color=color)
    if mark is not None:
        axes.plot(
            [mark, mark], [position - height / 2 - 0.05, position + height / 2 + 0.05], color=TARGET_COLOR, linewidth=2
        )
    axes.text(max(value, mark or 0) * 1.1, position, label, va="center", fontsize=8)


def tick_duration(nanoseconds: float) -> str:
    value, unit = in_unit(nanoseconds)
    return f"{value:g} {unit}"


def style_axes(axes: Axes, rows: list[str], tick: Callable[[float], str], title: str, legend: list[Artist]) -> None:
    """Rows from the top, a logarithmic x axis with labels from `tick`, the title and the legend."""
    axes.set_yticks(range(len(rows)), rows)
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.tick_params(axis="y", length=0)
    axes.set_xscale("log")
    left, right = axes.get_xlim()
    axes.set_xlim(left, right * 4)  # room for the value after the longest bar
    axes.xaxis.set_major_locator(LogLocator(base=10))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: tick(value)))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.grid(axis="x", color="#dddddd", linewidth=0.8)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.set_title(title, loc="left", fontsize=11)
    axes.legend(handles=legend, loc="upper right", fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, required=True, help="the output of katana-benchmarks --json")
    parser.add_argument(
        "--allocations",
        type=Path,
        required=True,
        help="a directory of package-benchmark threshold files (StoreBenchmarks.<case>.p90.json)",
    )
    parser.add_argument("--toolchain", required=True, help='the toolchain that ran them, e.g. "Swift 6.3.1"')
    arguments = parser.parse_args()
    run = load_run(arguments.json, arguments.allocations, arguments.toolchain)
    draw_chart(run, CHART)
    replace_block(README, readme_block(run))
    replace_block(ARTICLE, article_block(run))
    for path in (CHART, README, ARTICLE):
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        main()
    except LookupError as error:
        sys.exit(f"error: {error}")

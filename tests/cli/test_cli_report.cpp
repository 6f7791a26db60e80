// SPDX-License-Identifier: Apache-2.0
// kforge report / diff --html and --md, run as a separate process: the page parsed by a strict XML reader (it is
// written as XHTML-compatible markup), the Markdown's pipe tables, escaping, failed writes, and the page rendered by
// a real headless browser. Times are written into the saved runs, so nothing depends on the machine's speed.
#include "build_path.h"
#include "kforge_process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <QColor>
#include <QFile>
#include <QImage>
#include <QSet>
#include <QXmlStreamReader>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using kforge::clitest::Limits;
using kforge::clitest::Result;
using kforge::clitest::runKforge;

// Names a user controls, with every character the writers must escape.
const std::string kModel = "my|model`<b>&'\".pt";
const std::string kFunction = "ge|lu<&\"'>"; // tiny-gpt's gelu, renamed in the saved run

class TempDir {
public:
    TempDir() : m_dir(fs::temp_directory_path() / ("kforge-cli-report-" + std::to_string(std::random_device{}())))
    {
        fs::create_directories(m_dir);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    std::vector<std::string> entries() const
    {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(m_dir))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    fs::path m_dir;
};

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t columnOf(const json& run, const char* name)
{
    const json& columns = run.at("record_columns");
    return size_t(std::find(columns.begin(), columns.end(), name) - columns.begin());
}

// Every op of every run of the saved file takes `opNs[k]` in run k; `rename`: gelu and the model are renamed
// (kFunction, kModel).
void rewriteSaved(const std::string& path, const std::vector<long long>& opNs, bool rename)
{
    json k = json::parse(readFile(path));
    for (size_t r = 0; r < k.at("runs").size(); ++r) {
        json& run = k.at("runs")[r];
        const size_t duration = columnOf(run, "duration_ns");
        for (json& record : run.at("records"))
            record.at(duration) = opNs.at(r);
        if (!rename)
            continue;
        run["model"] = kModel;
        for (json& s : run.at("strings"))
            if (s == "gelu")
                s = kFunction;
    }
    std::ofstream(path) << k.dump();
}

// One baseline run of tiny-gpt, every op 10 us.
std::string savedRun(const TempDir& dir)
{
    const std::string path = dir.path("run.kfprof");
    const Result r =
        runKforge({"profile", "builtin:tiny-gpt", "--iterations", "3", "--threads", "1", "-q", "--save", path});
    EXPECT_EQ(r.exitCode, 0) << r;
    rewriteSaved(path, {10'000}, true);
    return path;
}

// A baseline (every op 20 us) and a plan (every op 10 us) in one file: the plan is twice as fast, beyond noise.
std::string savedPair(const TempDir& dir)
{
    const std::string path = dir.path("pair.kfprof");
    const Result r = runKforge({"compare", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--iterations",
                                "8", "--threads", "1", "-q", "--save", path});
    EXPECT_EQ(r.exitCode, 0) << r;
    rewriteSaved(path, {20'000, 10'000}, false);
    return path;
}

// The flame graph's frame paths that hold time, from the records as flameGraph() builds them (profiling.h): every
// module on the way to a record's module, "module/function", "module/function/op".
std::set<std::string> expectedFramePaths(const std::string& kfprof, size_t runIndex)
{
    const json k = json::parse(readFile(kfprof));
    const json& run = k.at("runs")[runIndex];
    const json& strings = run.at("strings");
    const size_t name = columnOf(run, "name"), module = columnOf(run, "module"), function = columnOf(run, "function");
    std::set<std::string> paths{""};
    for (const json& record : run.at("records")) {
        const std::string path = strings[record.at(module).get<size_t>()];
        std::string fn = strings[record.at(function).get<size_t>()];
        if (fn.empty())
            fn = "(no function)";
        for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
            paths.insert(path.substr(0, dot));
        paths.insert(path);
        paths.insert(path + "/" + fn);
        paths.insert(path + "/" + fn + "/" + strings[record.at(name).get<size_t>()].get<std::string>());
    }
    return paths;
}

// What a strict XML reader finds in the page.
struct Page {
    std::string error; // "" when the page is well-formed
    std::vector<std::string> headings;
    std::vector<std::vector<std::string>> rows; // every table row's cells (th and td)
    std::vector<std::string> rectTitles;        // the <title> of each <rect>, in order
    int svgs = 0;
};

Page parsePage(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    Page page;
    if (!file.open(QIODevice::ReadOnly)) {
        page.error = "cannot open " + path;
        return page;
    }
    QXmlStreamReader xml(&file);
    std::vector<QString> open;
    QString text;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            open.push_back(xml.name().toString());
            text.clear();
            if (open.back() == "tr")
                page.rows.emplace_back();
            else if (open.back() == "rect")
                page.rectTitles.emplace_back();
            else if (open.back() == "svg")
                ++page.svgs;
        } else if (xml.isCharacters()) {
            text += xml.text();
        } else if (xml.isEndElement()) {
            const QString name = open.back();
            open.pop_back();
            if ((name == "td" || name == "th") && !page.rows.empty())
                page.rows.back().push_back(text.toStdString());
            else if (name == "h2")
                page.headings.push_back(text.toStdString());
            else if (name == "title" && !open.empty() && open.back() == "rect")
                page.rectTitles.back() = text.toStdString();
            text.clear();
        }
    }
    if (xml.hasError())
        page.error = xml.errorString().toStdString() + " at line " + std::to_string(xml.lineNumber()) + ", column " +
                     std::to_string(xml.columnNumber());
    return page;
}

bool hasRow(const Page& page, const std::vector<std::string>& start)
{
    return std::any_of(page.rows.begin(), page.rows.end(), [&](const std::vector<std::string>& row) {
        return row.size() >= start.size() && std::equal(start.begin(), start.end(), row.begin());
    });
}

// Self-contained: the SVG namespace is the page's only URL, and nothing is loaded from anywhere.
void expectNoNetwork(std::string html)
{
    const std::string svgNamespace = "xmlns=\"http://www.w3.org/2000/svg\"";
    for (size_t at = html.find(svgNamespace); at != std::string::npos; at = html.find(svgNamespace))
        html.erase(at, svgNamespace.size());
    for (const char* reference : {"http://", "https://", "src=", "<link", "<script", "url(", "@import"})
        EXPECT_FALSE(contains(html, reference)) << reference;
}

// A pipe table's row: its cells, split at the pipes that are not escaped.
std::vector<std::string> cellsOf(const std::string& line)
{
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '|' && line[i - 1] != '\\') {
            cells.push_back(cell.size() >= 2 ? cell.substr(1, cell.size() - 2) : cell);
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    return cells;
}

std::vector<std::string> linesOf(const std::string& text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Every pipe table's rows have as many cells as its header: no name broke a row with a pipe of its own.
void expectWholeTables(const std::string& markdown)
{
    size_t columns = 0;
    for (const std::string& line : linesOf(markdown)) {
        if (line.empty() || line[0] != '|') {
            columns = 0;
            continue;
        }
        if (columns == 0)
            columns = cellsOf(line).size();
        else
            EXPECT_EQ(cellsOf(line).size(), columns) << line;
    }
}

} // namespace

// One run: the page parses strictly, and holds the setup, the module tree, the top functions and ops, and a flame
// graph with one titled rectangle per frame; the user's names are escaped, nothing is fetched, and it stays small.
TEST(CliShareableReport, HtmlIsOneWellFormedPageWithTheRunsTablesAndFlameGraph)
{
    TempDir dir;
    const std::string run = savedRun(dir), html = dir.path("report.html");
    const Result r = runKforge({"report", run, "--html", html});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(contains(r.out, "TOTAL ms")) << "the text output still prints\n" << r;
    EXPECT_TRUE(contains(r.out, "HTML report: " + html)) << r;

    const std::string text = readFile(html);
    EXPECT_LT(text.size(), 1'000'000u);
    expectNoNetwork(text);
    EXPECT_FALSE(contains(text, kFunction)) << "a name reaches the page unescaped";
    EXPECT_TRUE(contains(text, "ge|lu&lt;&amp;&quot;&#39;&gt;"));
    const Page page = parsePage(html);
    ASSERT_EQ(page.error, "");

    for (const char* heading : {"Setup", "Module tree", "Flame graph"})
        EXPECT_NE(std::find(page.headings.begin(), page.headings.end(), heading), page.headings.end()) << heading;
    EXPECT_TRUE(hasRow(page, {"model", kModel}));
    EXPECT_TRUE(hasRow(page, {"file", run + " (run 'baseline')"}));
    EXPECT_TRUE(hasRow(page, {"device", "cpu: timing ATen op executions"}));
    EXPECT_TRUE(hasRow(page, {"intra-op threads", "1"}));
    EXPECT_TRUE(hasRow(page, {"saved", json::parse(readFile(run)).at("created").get<std::string>()}))
        << "when the file was written, as it says";
    // The module tree: each module by its name, its type, and (every op 10 us) its time.
    EXPECT_TRUE(hasRow(page, {"MODULE", "TYPE", "TOTAL ms", "SELF ms", "SHARE %", "CALLS"}));
    EXPECT_TRUE(hasRow(page, {"(root)", "TinyGPT"}));
    EXPECT_TRUE(hasRow(page, {"attn", "CausalSelfAttention"}));
    EXPECT_TRUE(hasRow(page, {"qkv", "Linear", "0.010", "0.010"})) << "one linear op of 10 us per forward";
    // The top functions (the renamed gelu among them) and ops.
    EXPECT_TRUE(hasRow(page, {"FUNCTION", "CALLS", "TOTAL ms"}));
    for (const std::string& function : {std::string("linear"), kFunction, std::string("layer_norm")})
        EXPECT_TRUE(hasRow(page, {function})) << function;
    EXPECT_TRUE(hasRow(page, {"aten::addmm"}) || hasRow(page, {"aten::linear"}));

    // The flame graph: one rectangle per frame with time, titled by its path.
    EXPECT_EQ(page.svgs, 1);
    const std::set<std::string> frames = expectedFramePaths(run, 0);
    EXPECT_EQ(page.rectTitles.size(), frames.size());
    for (const std::string& path : frames) {
        const std::string shown = path.empty() ? "(root)" : path;
        EXPECT_TRUE(std::any_of(page.rectTitles.begin(), page.rectTitles.end(),
                                [&](const std::string& title) { return title.rfind(shown + " ", 0) == 0; }))
            << "no frame titled " << shown;
    }
    EXPECT_TRUE(std::any_of(page.rectTitles.begin(), page.rectTitles.end(), [](const std::string& title) {
        return title.rfind("blocks.0.mlp/" + kFunction + "/aten::gelu \u2014 0.010 ms per forward", 0) == 0;
    }));
}

// The same run as Markdown: the summary first, pipe tables with numbers right-aligned, names escaped so that no
// pipe of theirs breaks a row.
TEST(CliShareableReport, MarkdownHasPipeTablesAndEscapesNames)
{
    TempDir dir;
    const std::string run = savedRun(dir), md = dir.path("report.md"), html = dir.path("report.html");
    const Result r = runKforge({"report", run, "--md", md, "--html", html});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(fs::exists(html)) << "both options together";
    const std::string text = readFile(md);
    const std::vector<std::string> lines = linesOf(text);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0].rfind("**my\\|model\\`&lt;b&gt;&amp;'\".pt on cpu: ", 0), 0u) << lines[0];
    EXPECT_TRUE(contains(lines[0], " ms per forward")) << lines[0];
    for (const char* line :
         {"| MODULE | TYPE | TOTAL ms | SELF ms | SHARE % | CALLS |", "| --- | --- | ---: | ---: | ---: | ---: |",
          "| FUNCTION | CALLS | TOTAL ms | MEAN µs | MEDIAN µs | P95 µs | MAX µs | SHARE % |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", "### Module tree", "### Setup",
          "- **device**: cpu: timing ATen op executions"})
        EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end()) << line;
    EXPECT_TRUE(contains(text, "| ge\\|lu&lt;&amp;\"'&gt; |")) << text;
    EXPECT_FALSE(contains(text, "<svg"));
    expectWholeTables(text);
}

// A baseline and a plan (one file, or diff's A and B): the summary names the change and its verdict, the plan's
// entry carries its function's verdict, and the comparison's tables are those the text prints.
TEST(CliShareableReport, PairShowsTheComparisonAndThePlanVerdicts)
{
    TempDir dir;
    const std::string pair = savedPair(dir), html = dir.path("pair.html"), md = dir.path("pair.md");
    const Result r = runKforge({"report", pair, "--html", html, "--md", md});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(contains(r.out, "SPEEDUP")) << "the comparison still prints\n" << r;
    const std::string markdown = readFile(md);
    EXPECT_EQ(markdown.rfind("**plan vs baseline: total -50.0% (faster)", 0), 0u) << markdown;
    EXPECT_TRUE(contains(markdown, "| 0 | (root) | gelu | AtenGeluProvider | yes | - | faster |")) << markdown;
    EXPECT_TRUE(contains(markdown, "| FUNCTION | BEFORE µs (MEDIAN) | AFTER µs (MEDIAN) | SPEEDUP | 95% INTERVAL | "
                                   "VERDICT |"))
        << markdown;
    EXPECT_TRUE(contains(markdown, "| linear | ")) << markdown;
    EXPECT_TRUE(contains(markdown, "| 2.00x | 2.00-2.00x | faster |")) << markdown;
    EXPECT_TRUE(contains(markdown, "| MODULE | BEFORE ms | AFTER ms | CHANGE % | VERDICT |")) << markdown;
    expectWholeTables(markdown);

    const std::string text = readFile(html);
    expectNoNetwork(text);
    EXPECT_LT(text.size(), 1'000'000u);
    const Page page = parsePage(html);
    ASSERT_EQ(page.error, "");
    EXPECT_TRUE(hasRow(page, {"", "baseline", "plan"}));
    EXPECT_TRUE(hasRow(page, {"plan", "none (baseline)", "1 entry: (root) gelu -> AtenGeluProvider"}));
    // The module tree with both times: every module took half as long.
    EXPECT_TRUE(hasRow(page, {"MODULE", "BEFORE ms", "AFTER ms", "CHANGE %", "VERDICT"}));
    EXPECT_TRUE(std::any_of(page.rows.begin(), page.rows.end(), [](const std::vector<std::string>& row) {
        return row.size() == 5 && row[0] == "attn" && row[3] == "-50.0" && row[4] == "faster";
    }));
    EXPECT_EQ(page.rectTitles.size(), expectedFramePaths(pair, 1).size());
    EXPECT_TRUE(contains(text, "fill=\"#8fd19e\"")) << "frames faster than the baseline are green";

    // diff: the same writer, with A and B.
    const std::string diffMd = dir.path("diff.md"), diffHtml = dir.path("diff.html");
    const Result d =
        runKforge({"diff", pair, pair, "--run-a", "baseline", "--run-b", "plan", "--md", diffMd, "--html", diffHtml});
    ASSERT_EQ(d.exitCode, 0) << d;
    const std::string diffMarkdown = readFile(diffMd);
    EXPECT_EQ(diffMarkdown.rfind("**B vs A: total -50.0% (faster)", 0), 0u) << diffMarkdown;
    // diff's own table: the ops and kernels paired by place, as it prints them.
    EXPECT_TRUE(contains(diffMarkdown, "### Ops and kernels paired by place")) << diffMarkdown;
    EXPECT_TRUE(contains(diffMarkdown, "paired by place: 100.0% of A's op time, 100.0% of B's")) << diffMarkdown;
    EXPECT_TRUE(contains(diffMarkdown, "| MODULE/FUNCTION | A | B | A us | B us | CHANGE | VERDICT |")) << diffMarkdown;
    EXPECT_TRUE(contains(diffMarkdown, "| -50.0% | faster |")) << diffMarkdown;
    expectWholeTables(diffMarkdown);
    EXPECT_EQ(parsePage(diffHtml).error, "");
}

// A report that cannot be written fails naming the path, and leaves nothing behind: not in a folder that does not
// exist, nor half a page when the disk fills (a file size limit) in the middle of it.
TEST(CliShareableReport, AFailedWriteNamesThePathAndLeavesNoFile)
{
    TempDir dir;
    const std::string run = savedRun(dir);
    const std::string missing = dir.path("no-such-folder") + "/report.html";
    const Result r = runKforge({"report", run, "--html", missing});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, missing)) << r;

    const std::string full = dir.path("full.md"), page = dir.path("full.html");
    const Result filled = runKforge({"report", run, "--md", full, "--html", page}, Limits{4096});
    EXPECT_EQ(filled.exitCode, 1) << filled;
    EXPECT_TRUE(contains(filled.err, page)) << filled;
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.kfprof"}) << "no report and no temporary file left";
}

// The check that the page renders: headless Chromium (scripts/bootstrap installs it) screenshots it, and the
// picture is not blank and shows the flame graph's module colour.
TEST(CliReportBrowser, HeadlessChromiumRendersTheHtmlReport)
{
    std::string browser;
    for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
        if (fs::exists(candidate) && browser.empty())
            browser = candidate;
    ASSERT_FALSE(browser.empty()) << "no Chromium: scripts/bootstrap installs Debian's chromium package";

    TempDir dir;
    const std::string run = savedRun(dir), html = dir.path("report.html"), png = dir.path("report.png");
    ASSERT_EQ(runKforge({"report", run, "--html", html}).exitCode, 0);
    const std::string command =
        "timeout 120 " + browser + " --headless --no-sandbox --disable-gpu --user-data-dir=" + dir.path("profile") +
        " --screenshot=" + png + " --window-size=1280,3000 file://" + html + " > " + dir.path("chromium.log") + " 2>&1";
    const int status = std::system(command.c_str());
    ASSERT_EQ(status, 0) << command << '\n' << readFile(dir.path("chromium.log"));

    QImage image;
    ASSERT_TRUE(image.load(QString::fromStdString(png))) << "no PNG from " << command;
    EXPECT_EQ(image.width(), 1280);
    QSet<QRgb> colours;
    bool flameColour = false;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) {
            const QRgb pixel = image.pixel(x, y);
            colours.insert(pixel);
            flameColour = flameColour || QColor(pixel) == QColor("#a9c8e8") || QColor(pixel) == QColor("#b7d2ec") ||
                          QColor(pixel) == QColor("#9dbfe3") || QColor(pixel) == QColor("#c3daf0");
        }
    EXPECT_GT(colours.size(), 10) << "a blank page";
    EXPECT_TRUE(flameColour) << "no module frame of the flame graph in the picture";
}

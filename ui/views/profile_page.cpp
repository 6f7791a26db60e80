// SPDX-License-Identifier: Apache-2.0
#include "profile_page.h"

#include "item_models/comparison_model.h"
#include "item_models/duration_format.h"
#include "item_models/format.h"
#include "item_models/kernel_stats_model.h"
#include "item_models/speed_summary.h"
#include "item_models/timeline_details.h"
#include "controllers/benchmark_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/profile_results_source.h"
#include "controllers/verify_controller.h"
#include "views/flame_graph_page.h"
#include "views/memory_page.h"
#include "views/time_share_chart.h"
#include "views/timeline_view.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kforge::ui {
namespace {

const QString kWarmupKey = QStringLiteral("profile/warmup");
const kforge::Plan kNoPlan; // the plan of a comparison without a plan run: none (a reference, no copy)

const char* const kBenchmarkIntro =
    QT_TRANSLATE_NOOP("kforge::ui::ProfilePage", "Benchmark (Ctrl+Shift+F6) times whole forwards without and "
                                                 "with the plan, without the profiler, and tells whether the "
                                                 "speedup is beyond noise.");
QString verifyText(const std::optional<kforge::VerifyReport>& report)
{
    return report
               ? formatVerify(*report)
               : ProfilePage::tr("Verify (F7) runs the model without and with the plan on the same inputs, judges its "
                                 "outputs, and names the first module where they diverge.");
}

const QString kIterationsKey = QStringLiteral("profile/iterations");
const QString kRecordShapesKey = QStringLiteral("profile/recordShapes");
const QString kRecordMemoryKey = QStringLiteral("profile/recordMemory");
const QString kDeviceKey = QStringLiteral("profile/device");

QTableView* makeTable(QWidget* parent, const QString& name)
{
    auto* table = new QTableView(parent);
    table->setObjectName(name);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setAlternatingRowColors(true);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideMiddle); // kernel names and module paths differ at both ends
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setHighlightSections(false);
    return table;
}

QToolButton* makeButton(QWidget* parent)
{
    auto* button = new QToolButton(parent);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setAutoRaise(true);
    return button;
}

// What a running action is doing, in words that fit beside the bar: "Baseline: warm-up 1 of 3", "With plan: forward
// 4 of 10", "Compare: round 2 of 10", "Benchmark: round 5 of 20". `done` and `total` count the stage's forwards,
// warm-up first (a benchmark counts rounds); a compare's rounds are of both sides, the first with the warm-up and
// each later one with one warm-up forward per side (kforge/study.h).
QString progressText(const QString& stage, int done, int total, int warmup, int iterations)
{
    if (stage == QLatin1String("verify"))
        return ProfilePage::tr("Verify: forward %1 of %2").arg(std::min(done + 1, total)).arg(total);
    if (stage == QLatin1String("baseline and plan")) {
        const int firstRound = 2 * (warmup + 1), laterRound = 2 * (warmup > 0 ? 2 : 1);
        if (done < firstRound)
            return ProfilePage::tr("Compare: round 1 of %1, with the warm-up").arg(iterations);
        return ProfilePage::tr("Compare: round %1 of %2")
            .arg(std::min(iterations, 2 + (done - firstRound) / laterRound))
            .arg(iterations);
    }
    const bool rounds = stage == QLatin1String("benchmark");
    const QString name = stage == QLatin1String("plan") ? ProfilePage::tr("With plan")
                         : rounds                       ? ProfilePage::tr("Benchmark")
                                                        : ProfilePage::tr("Baseline");
    const int warm = std::min(total, warmup);
    if (done < warm)
        return ProfilePage::tr("%1: warm-up %2 of %3").arg(name).arg(done + 1).arg(warm);
    return (rounds ? ProfilePage::tr("%1: round %2 of %3") : ProfilePage::tr("%1: forward %2 of %3"))
        .arg(name)
        .arg(std::min(done - warm + 1, total - warm))
        .arg(total - warm);
}

} // namespace

ProfilePage::ProfilePage(ProfileResultsSource* results, ProfileController* controller, QWidget* parent)
    : QWidget(parent), m_source(results), m_controller(controller), m_results(results->results()),
      m_statsModel(new KernelStatsModel(this)), m_statsProxy(new QSortFilterProxyModel(this)),
      m_chart(new TimeShareChart(this)), m_timeline(new TimelineView(this)),
      m_comparisonModel(new ComparisonModel(this))
{
    setObjectName(QStringLiteral("profilePage"));
    m_chart->setObjectName(QStringLiteral("timeShareChart"));
    m_timeline->setObjectName(QStringLiteral("timeline"));

    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("profileHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setContentsMargins(6, 0, 6, 0);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("profileTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(createKernelsTab(), tr("&Kernels"));
    m_tabs->addTab(m_chart, tr("Ch&art"));
    m_tabs->addTab(createTimelineTab(), tr("&Timeline"));
    m_tabs->addTab(createComparisonTab(), tr("Co&mparison"));
    m_flame = new FlameGraphPage(this);
    m_tabs->addTab(m_flame, tr("F&lame Graph"));
    m_memory = new MemoryPage(this);
    m_tabs->addTab(m_memory, tr("Memor&y"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(createTopBar());
    layout->addWidget(m_header);
    layout->addWidget(m_tabs, 1);

    if (m_controller) {
        loadSettings();
        follow(m_controller);
    } else { // a report: nothing to run, and the Profile tab's settings are the user's, not a report's
        m_persistent = false;
        for (QWidget* control : std::as_const(m_runControls))
            control->hide();
    }
    connect(m_source, &ProfileResultsSource::resultsChanged, this, &ProfilePage::setResults);
    setRunning(false);
    showResults();
}

void ProfilePage::follow(MeasureController* measurement)
{
    connect(measurement, &MeasureController::runningChanged, this, &ProfilePage::setRunning);
    connect(measurement, &MeasureController::progress, this, &ProfilePage::showProgress);
}

void ProfilePage::setMeasurements(BenchmarkController* benchmark, VerifyController* verify)
{
    m_benchmark = benchmark;
    m_verify = verify;
    for (MeasureController* measurement :
         {static_cast<MeasureController*>(benchmark), static_cast<MeasureController*>(verify)}) {
        follow(measurement);
        // The Comparison tab is where the benchmark's and the verification's results are.
        connect(measurement, &MeasureController::finished, this, [this](MeasureController::Outcome outcome) {
            if (outcome != MeasureController::Outcome::Failed)
                showSubView(QStringLiteral("comparison"));
        });
    }
    connect(benchmark, &BenchmarkController::resultsChanged, this, [this] {
        if (m_benchmark->result())
            m_newer = NewerResult::Benchmark;
        showResults();
    });
    connect(verify, &VerifyController::resultsChanged, this, &ProfilePage::showResults);
    showResults();
}

bool ProfilePage::anyRunning() const
{
    return (m_controller && m_controller->isRunning()) || (m_benchmark && m_benchmark->isRunning()) ||
           (m_verify && m_verify->isRunning());
}

QWidget* ProfilePage::createTopBar()
{
    auto* bar = new QWidget(this);
    m_baselineButton = makeButton(bar);
    m_planButton = makeButton(bar);
    m_compareButton = makeButton(bar);
    m_benchmarkButton = makeButton(bar);
    m_verifyButton = makeButton(bar);
    m_cancelButton = makeButton(bar);

    m_warmupBox = new QSpinBox(bar);
    m_warmupBox->setObjectName(QStringLiteral("profileWarmup"));
    m_warmupBox->setRange(0, 1000);
    m_warmupBox->setToolTip(tr("Forwards run before measuring: caches, allocator and autotuning settle"));
    m_iterationsBox = new QSpinBox(bar);
    m_iterationsBox->setObjectName(QStringLiteral("profileIterations"));
    m_iterationsBox->setRange(1, 100000);
    m_iterationsBox->setToolTip(tr("Measured forwards"));

    m_deviceCombo = new QComboBox(bar);
    m_deviceCombo->setObjectName(QStringLiteral("profileDevice"));
    m_deviceCombo->addItem(tr("CPU"), QStringLiteral("cpu"));
    m_deviceCombo->setItemData(0, tr("Times every ATen op execution on the host"), Qt::ToolTipRole);
    m_deviceCombo->addItem(tr("CUDA"), QStringLiteral("cuda"));
    QString why;
    if (ProfileController::cudaAvailable(&why)) {
        m_deviceCombo->setItemData(1, tr("Traces CUDA kernels with CUPTI"), Qt::ToolTipRole);
    } else {
        // Listed but not selectable: the user sees that CUDA exists as a choice and why it is not one here.
        if (auto* items = qobject_cast<QStandardItemModel*>(m_deviceCombo->model()))
            items->item(1)->setEnabled(false);
        m_deviceCombo->setItemData(1, tr("Not available: %1").arg(why), Qt::ToolTipRole);
        m_deviceCombo->setToolTip(tr("CUDA profiling is not available: %1").arg(why));
    }

    m_shapesBox = new QCheckBox(tr("Record shapes"), bar);
    m_shapesBox->setObjectName(QStringLiteral("profileRecordShapes"));
    m_shapesBox->setToolTip(tr("Record each op's input shapes, to group the kernel table by op and input shapes (as "
                               "torch.profiler's record_shapes): profiling takes longer"));

    m_memoryBox = new QCheckBox(tr("Record memory"), bar);
    m_memoryBox->setObjectName(QStringLiteral("profileRecordMemory"));
    m_memoryBox->setToolTip(tr("Record every allocation and free (as torch.profiler's profile_memory): the module tree "
                               "shows the bytes allocated and the peak per module; profiling takes longer"));

    m_showLabel = new QLabel(tr("Show:"), bar);
    m_showCombo = new QComboBox(bar);
    m_showCombo->setObjectName(QStringLiteral("profileShow"));
    m_showCombo->addItem(tr("Baseline"), QVariant::fromValue(Shown::Baseline));
    m_showCombo->addItem(tr("Plan"), QVariant::fromValue(Shown::Plan));
    m_showCombo->setToolTip(tr("The run the kernel table, chart and timeline show"));
    m_showLabel->setBuddy(m_showCombo);

    m_progress = new QProgressBar(bar);
    m_progress->setObjectName(QStringLiteral("profileProgress"));
    m_progress->setMaximumWidth(160);
    m_progressText = new QLabel(bar); // beside the bar: the bar's own text is cut in a narrow window
    m_progressText->setObjectName(QStringLiteral("profileProgressText"));

    auto* warmupLabel = new QLabel(tr("&Warm-up:"), bar);
    warmupLabel->setBuddy(m_warmupBox);
    auto* iterationsLabel = new QLabel(tr("&Iterations:"), bar);
    iterationsLabel->setBuddy(m_iterationsBox);
    auto* deviceLabel = new QLabel(tr("&Device:"), bar);
    deviceLabel->setBuddy(m_deviceCombo);

    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addWidget(m_baselineButton);
    layout->addWidget(m_planButton);
    layout->addWidget(m_compareButton);
    layout->addWidget(m_benchmarkButton);
    layout->addWidget(m_verifyButton);
    layout->addSpacing(12);
    layout->addWidget(warmupLabel);
    layout->addWidget(m_warmupBox);
    layout->addWidget(iterationsLabel);
    layout->addWidget(m_iterationsBox);
    layout->addWidget(deviceLabel);
    layout->addWidget(m_deviceCombo);
    layout->addWidget(m_shapesBox);
    layout->addWidget(m_memoryBox);
    layout->addSpacing(12);
    layout->addWidget(m_showLabel);
    layout->addWidget(m_showCombo);
    layout->addStretch(1);
    layout->addWidget(m_progressText);
    layout->addWidget(m_progress);
    layout->addWidget(m_cancelButton);
    m_runControls = {m_baselineButton, m_planButton, m_compareButton, m_benchmarkButton, m_verifyButton,
                     warmupLabel,      m_warmupBox,  iterationsLabel, m_iterationsBox,   deviceLabel,
                     m_deviceCombo,    m_shapesBox,  m_memoryBox};

    connect(m_showCombo, &QComboBox::currentIndexChanged, this, &ProfilePage::showRun);
    if (!m_controller)
        return bar;
    connect(m_warmupBox, &QSpinBox::valueChanged, this, [this](int value) {
        m_controller->setWarmupIterations(value);
        saveSetting(kWarmupKey, value);
    });
    connect(m_iterationsBox, &QSpinBox::valueChanged, this, [this](int value) {
        m_controller->setIterations(value);
        saveSetting(kIterationsKey, value);
    });
    connect(m_deviceCombo, &QComboBox::currentIndexChanged, this, [this] {
        const QString device = m_deviceCombo->currentData().toString();
        m_controller->setDevice(device);
        saveSetting(kDeviceKey, device);
        Q_EMIT deviceChanged(device);
    });
    connect(m_shapesBox, &QCheckBox::toggled, this, [this](bool record) {
        m_controller->setRecordShapes(record);
        saveSetting(kRecordShapesKey, record);
    });
    connect(m_memoryBox, &QCheckBox::toggled, this, [this](bool record) {
        m_controller->setRecordMemory(record);
        saveSetting(kRecordMemoryKey, record);
    });
    return bar;
}

QWidget* ProfilePage::createKernelsTab()
{
    m_kernelsTab = new QWidget(this);
    m_groupCombo = new QComboBox(m_kernelsTab);
    m_groupCombo->setObjectName(QStringLiteral("kernelGroupBy"));
    m_groupCombo->addItem(tr("Kernel"), int(kforge::GroupBy::Kernel));
    m_groupCombo->addItem(tr("Kernel and launch geometry"), int(kforge::GroupBy::KernelGeometry));
    m_groupCombo->addItem(tr("Function"), int(kforge::GroupBy::Function));
    m_groupCombo->addItem(tr("Module"), int(kforge::GroupBy::Module));
    m_groupCombo->addItem(tr("Op and input shapes"), int(kforge::GroupBy::OpInputShapes));
    m_groupCombo->setItemData(m_groupCombo->count() - 1,
                              tr("Needs a run with Record shapes on; without, ops group by name"), Qt::ToolTipRole);
    m_filterEdit = new QLineEdit(m_kernelsTab);
    m_filterEdit->setObjectName(QStringLiteral("kernelFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter by name (Ctrl+F)"));
    m_filterEdit->setClearButtonEnabled(true);
    m_regexBox = new QCheckBox(tr("Regex"), m_kernelsTab);
    m_regexBox->setToolTip(tr("Read the filter as a regular expression (case-insensitive)"));
    m_scopeChip = new QToolButton(m_kernelsTab);
    m_scopeChip->setObjectName(QStringLiteral("kernelScopeChip"));
    m_scopeChip->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_scopeChip->setVisible(false);

    m_statsProxy->setSourceModel(m_statsModel);
    m_statsProxy->setSortRole(KernelStatsModel::SortRole);
    m_statsProxy->setFilterKeyColumn(KernelStatsModel::KeyColumn);
    m_statsProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_kernelTable = makeTable(m_kernelsTab, QStringLiteral("kernelTable"));
    m_kernelTable->setModel(m_statsProxy);
    m_kernelTable->setSortingEnabled(true);
    m_kernelTable->sortByColumn(KernelStatsModel::TotalColumn, Qt::DescendingOrder);
    m_kernelTable->horizontalHeader()->resizeSection(KernelStatsModel::KeyColumn, 340);
    m_kernelTable->horizontalHeader()->resizeSection(KernelStatsModel::FunctionColumn, 160);
    m_kernelTable->horizontalHeader()->resizeSection(KernelStatsModel::ModuleColumn, 160);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    auto* groupLabel = new QLabel(tr("&Group by:"), m_kernelsTab);
    groupLabel->setBuddy(m_groupCombo);
    bar->addWidget(groupLabel);
    bar->addWidget(m_groupCombo);
    bar->addWidget(m_scopeChip);
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(m_regexBox);
    auto* layout = new QVBoxLayout(m_kernelsTab);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_kernelTable, 1);

    connect(m_groupCombo, &QComboBox::currentIndexChanged, this, &ProfilePage::showTable);
    connect(m_scopeChip, &QToolButton::clicked, this, [this] {
        setModuleScope(QString());
        Q_EMIT moduleScopeCleared();
    });
    connect(m_filterEdit, &QLineEdit::textChanged, this, &ProfilePage::applyFilter);
    connect(m_regexBox, &QCheckBox::toggled, this, &ProfilePage::applyFilter);
    return m_kernelsTab;
}

QWidget* ProfilePage::createTimelineTab()
{
    m_timelineTab = new QWidget(this);
    m_timeline->setParent(m_timelineTab);
    m_timelineDetails = new QLabel(m_timelineTab);
    m_timelineDetails->setObjectName(QStringLiteral("timelineDetails"));
    m_timelineDetails->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse |
                                               Qt::LinksAccessibleByKeyboard);
    m_timelineDetails->setTextFormat(Qt::RichText);
    m_timelineDetails->setWordWrap(true);
    m_timelineDetails->setContentsMargins(6, 2, 6, 4);
    auto* layout = new QVBoxLayout(m_timelineTab);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_timeline, 1);
    layout->addWidget(m_timelineDetails);
    // A click shows the item's details here and selects its row in the kernel table, which the link shows.
    connect(m_timeline, &TimelineView::recordClicked, this, [this](int record) {
        const auto run = shownRun();
        if (!run)
            return;
        m_detailsRecord = record;
        const bool inTable = selectRecordRow(record, /*showTable=*/false);
        m_timelineDetails->setText(
            recordDetails(*run, record).toHtmlEscaped() +
            (inTable ? QStringLiteral(" · <a href=\"kernels\">%1</a>").arg(tr("Show in the kernel table"))
                     : QString()));
    });
    connect(m_timeline, &TimelineView::rangeClicked, this, [this](int range) {
        if (const auto run = shownRun()) {
            m_detailsRecord = -1;
            m_timelineDetails->setText(rangeDetails(*run, range).toHtmlEscaped());
        }
    });
    connect(m_timelineDetails, &QLabel::linkActivated, this, [this] { selectRecordRow(m_detailsRecord); });
    connect(m_timeline, &TimelineView::measuredSpanChanged, this, [this](double startNs, double endNs) {
        const auto run = shownRun();
        m_timelineDetails->setText(
            (run && endNs > startNs ? spanSummary(*run, startNs, endNs) : timelineHint()).toHtmlEscaped());
    });
    m_timelineDetails->setText(timelineHint().toHtmlEscaped());
    return m_timelineTab;
}

QString ProfilePage::timelineHint()
{
    return tr("Click an item for its details; Shift+drag to measure a span and see where its time went.");
}

QWidget* ProfilePage::createComparisonTab()
{
    m_comparisonTab = new QWidget(this);
    m_comparisonGroupCombo = new QComboBox(m_comparisonTab);
    m_comparisonGroupCombo->setObjectName(QStringLiteral("comparisonGroupBy"));
    m_comparisonGroupCombo->addItem(tr("Function"), QVariant::fromValue(ComparisonModel::Grouping::Function));
    m_comparisonGroupCombo->addItem(tr("Module"), QVariant::fromValue(ComparisonModel::Grouping::Module));
    m_comparisonSummary = new QLabel(m_comparisonTab);
    m_comparisonSummary->setObjectName(QStringLiteral("comparisonSummary"));
    m_comparisonSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_benchmarkSummary = new QLabel(m_comparisonTab);
    m_benchmarkSummary->setObjectName(QStringLiteral("benchmarkSummary"));
    m_benchmarkSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_benchmarkSummary->setWordWrap(true);
    m_benchmarkSummary->setContentsMargins(4, 0, 4, 0);
    m_verifySummary = new QLabel(m_comparisonTab);
    m_verifySummary->setObjectName(QStringLiteral("verifySummary"));
    m_verifySummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verifySummary->setWordWrap(true);
    m_verifySummary->setContentsMargins(4, 0, 4, 0);
    m_comparisonTable = makeTable(m_comparisonTab, QStringLiteral("comparisonTable"));
    m_comparisonTable->setModel(m_comparisonModel);
    m_comparisonTable->horizontalHeader()->resizeSection(ComparisonModel::KeyColumn, 300);
    m_comparisonTable->horizontalHeader()->setStretchLastSection(true);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    auto* groupLabel = new QLabel(tr("Compare &by:"), m_comparisonTab);
    groupLabel->setBuddy(m_comparisonGroupCombo);
    bar->addWidget(groupLabel);
    bar->addWidget(m_comparisonGroupCombo);
    bar->addSpacing(12);
    bar->addWidget(m_comparisonSummary, 1);
    auto* layout = new QVBoxLayout(m_comparisonTab);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_benchmarkSummary);
    layout->addWidget(m_verifySummary);
    layout->addWidget(m_comparisonTable, 1);
    auto* legend = new QLabel(tr("Times are medians per iteration; baseline and plan run in alternating rounds. "
                                 "Green: faster, red: slower (the 95% interval of the per-iteration ratios excludes "
                                 "1.0×); uncoloured: no detectable change. Hover a row for its interval."),
                              m_comparisonTab);
    legend->setObjectName(QStringLiteral("comparisonLegend"));
    legend->setWordWrap(true);
    legend->setContentsMargins(4, 0, 4, 2);
    legend->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(legend);

    connect(m_comparisonGroupCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_comparisonModel->setGrouping(m_comparisonGroupCombo->currentData().value<ComparisonModel::Grouping>());
    });
    return m_comparisonTab;
}

void ProfilePage::setActions(const Actions& actions)
{
    m_baselineButton->setDefaultAction(actions.runBaseline);
    m_planButton->setDefaultAction(actions.runWithPlan);
    m_compareButton->setDefaultAction(actions.compare);
    m_benchmarkButton->setDefaultAction(actions.benchmark);
    m_verifyButton->setDefaultAction(actions.verify);
    m_cancelButton->setDefaultAction(actions.cancel);
    setRunning(anyRunning());
}

void ProfilePage::loadSettings()
{
    // Blocked: reading the settings must not write them back (batch runs leave the user's settings alone).
    const QSignalBlocker blockWarmup(m_warmupBox);
    const QSignalBlocker blockIterations(m_iterationsBox);
    const QSignalBlocker blockDevice(m_deviceCombo);
    const QSignalBlocker blockShapes(m_shapesBox);
    const QSignalBlocker blockMemory(m_memoryBox);
    const QSettings settings;
    m_shapesBox->setChecked(settings.value(kRecordShapesKey, m_controller->recordShapes()).toBool());
    m_memoryBox->setChecked(settings.value(kRecordMemoryKey, m_controller->recordMemory()).toBool());
    m_warmupBox->setValue(settings.value(kWarmupKey, m_controller->warmupIterations()).toInt());
    m_iterationsBox->setValue(settings.value(kIterationsKey, m_controller->iterations()).toInt());
    const int device = m_deviceCombo->findData(settings.value(kDeviceKey, m_controller->device()).toString());
    const bool usable =
        device >= 0 && m_deviceCombo->model()->flags(m_deviceCombo->model()->index(device, 0)) & Qt::ItemIsEnabled;
    m_deviceCombo->setCurrentIndex(usable ? device : 0);
    // The boxes only tell the controller when their value changes: make sure it has them all.
    m_controller->setWarmupIterations(m_warmupBox->value());
    m_controller->setIterations(m_iterationsBox->value());
    m_controller->setDevice(m_deviceCombo->currentData().toString());
    m_controller->setRecordShapes(m_shapesBox->isChecked());
    m_controller->setRecordMemory(m_memoryBox->isChecked());
}

void ProfilePage::saveSetting(const QString& key, const QVariant& value)
{
    if (m_persistent)
        QSettings().setValue(key, value);
}

void ProfilePage::applyFilter()
{
    const QString text = m_filterEdit->text();
    if (!m_regexBox->isChecked()) {
        m_statsProxy->setFilterFixedString(text);
        m_filterEdit->setToolTip({});
        return;
    }
    const QRegularExpression expression(text, QRegularExpression::CaseInsensitiveOption);
    if (!expression.isValid()) {
        m_filterEdit->setToolTip(tr("Not a valid regular expression: %1").arg(expression.errorString()));
        m_statsProxy->setFilterFixedString({});
        return;
    }
    m_filterEdit->setToolTip({});
    m_statsProxy->setFilterRegularExpression(expression);
}

void ProfilePage::setOrigin(const QString& origin)
{
    m_origin = origin;
    updateHeader();
}

void ProfilePage::setResults(const ResultsPtr& results)
{
    const ResultsPtr before = std::exchange(m_results, results);
    // New runs: what the comparison shows is newer than any benchmark (NewerResult).
    if (results->comparison && results->comparison != before->comparison)
        m_newer = NewerResult::Comparison;
    showResults();
}

void ProfilePage::showResults()
{
    const auto& baseline = m_results->baseline.run;
    const auto& plan = m_results->plan.run;
    // The run that just arrived is the one to look at; otherwise keep what the user chose.
    const bool newPlan = plan && plan != m_lastRuns.second;
    const bool newBaseline = baseline && baseline != m_lastRuns.first;
    m_lastRuns = {baseline, plan};
    Shown shown = this->shown();
    if (newPlan || !baseline)
        shown = Shown::Plan;
    else if (newBaseline || !plan)
        shown = Shown::Baseline;

    const bool both = baseline && plan;
    m_showLabel->setVisible(both);
    m_showCombo->setVisible(both);
    m_comparisonModel->setComparison(m_results->comparison ? std::optional(*m_results->comparison) : std::nullopt);
    // The number columns fit their header ("Baseline (µs, median)") and values: a fixed width cut the header.
    for (int column : {ComparisonModel::BaselineColumn, ComparisonModel::PlanColumn, ComparisonModel::SpeedupColumn,
                       ComparisonModel::ChangeColumn})
        m_comparisonTable->resizeColumnToContents(column);
    const auto& comparison = m_results->comparison;
    const kforge::BenchmarkResult* benchmark = m_benchmark && m_benchmark->result() ? &*m_benchmark->result() : nullptr;
    const WholeForwardLines lines = wholeForwardLines(comparison ? &*comparison : nullptr, plan ? plan->plan : kNoPlan,
                                                      benchmark, m_benchmark ? m_benchmark->measuredPlan() : kNoPlan,
                                                      m_newer, m_comparisonModel->outputErrorText());
    m_comparisonSummary->setText(
        comparison
            ? lines.comparison
            : tr("Compare runs the baseline and the plan in alternating rounds, and shows the time of each "
                 "function or module before and after, with a verdict: faster, slower or no detectable change."));
    m_benchmarkSummary->setText(benchmark ? lines.benchmark : tr(kBenchmarkIntro));
    static const std::optional<kforge::VerifyReport> kNoReport;
    m_verifySummary->setText(verifyText(m_verify ? m_verify->report() : kNoReport));
    const int index = m_showCombo->findData(QVariant::fromValue(shown));
    if (index == m_showCombo->currentIndex())
        showRun();
    else
        m_showCombo->setCurrentIndex(index); // showRun() follows
}

void ProfilePage::setModuleScope(const QString& path)
{
    if (path == m_scope)
        return;
    m_scope = path;
    m_scopeChip->setText(tr("Module: %1  ×").arg(formatModulePath(path.toStdString())));
    m_scopeChip->setToolTip(tr("The table counts only the records of %1 and the modules below it (selected in the "
                               "module tree). Click to show the whole run.")
                                .arg(formatModulePath(path.toStdString())));
    m_scopeChip->setVisible(!path.isEmpty());
    m_timeline->setHighlightedModule(path);
    showTable();
}

void ProfilePage::showTable()
{
    const TableKey key{kforge::GroupBy(m_groupCombo->currentData().toInt()), m_scope.toStdString()};
    m_source->showTable(key); // made off the UI thread when the results lack it, and shown when they come
    m_statsModel->setTable(shownResults(), key);
    updateHeader();
}

void ProfilePage::setDevice(const QString& device)
{
    const int index = m_deviceCombo->findData(device);
    const QAbstractItemModel* items = m_deviceCombo->model();
    if (index >= 0 && items->flags(items->index(index, 0)) & Qt::ItemIsEnabled)
        m_deviceCombo->setCurrentIndex(index);
}

void ProfilePage::setShown(Shown shown)
{
    m_showCombo->setCurrentIndex(m_showCombo->findData(QVariant::fromValue(shown)));
}

ProfilePage::Shown ProfilePage::shown() const { return m_showCombo->currentData().value<Shown>(); }

bool ProfilePage::savePicture(Picture picture, const QString& file, QString* error) const
{
    return picture == Picture::Chart ? m_chart->savePng(file, error) : m_timeline->savePng(file, error);
}

bool ProfilePage::computingTable() const { return m_source->computingTable(); }

const RunResults& ProfilePage::shownResults() const
{
    return shown() == Shown::Plan ? m_results->plan : m_results->baseline;
}

std::shared_ptr<const kforge::ProfileRun> ProfilePage::shownRun() const { return shownResults().run; }

void ProfilePage::showRun()
{
    const RunResults& shownRun = shownResults();
    m_chart->setRun(shownRun);
    if (m_timeline->run() != shownRun.run) // the same run keeps its zoom and selection
        m_timeline->setRun(shownRun.run);
    m_timelineDetails->setText(timelineHint().toHtmlEscaped()); // the details were of the run shown before
    // The plan's flame graph can be coloured by speedup against the baseline's.
    m_flame->setResults(m_results, shown() == Shown::Plan);
    m_memory->setResults(m_results, shown() == Shown::Plan); // the plan's against the baseline's
    showTable();
    Q_EMIT shownRunChanged();
}

void ProfilePage::updateHeader() { m_header->setText(headerText()); }

QString ProfilePage::headerText() const
{
    const auto run = shownRun();
    if (!run)
        return tr("No profile yet: run a baseline (F6), a run with the plan (Shift+F6) or a comparison (Ctrl+F6), "
                  "or open a saved .kfprof (File › Open Profile).");
    QStringList parts;
    if (run->inProgress)
        parts << tr("Measuring: %n iteration(s) so far, refined as the others end", nullptr, run->iterations);
    else if (replacedByRunningProfile(*run))
        parts << tr("Previous run: a new one is running");
    parts << (run->usedPlan ? tr("With plan") : tr("Baseline"));
    parts << QString::fromStdString(run->model);
    parts << QString::fromStdString(run->deviceName);
    if (!run->graphExecutor.empty())
        parts << tr("%1 graph executor").arg(QString::fromStdString(run->graphExecutor));
    if (run->intraOpThreads > 0 && run->device != "cuda")
        parts << tr("%n intra-op thread(s)", nullptr, run->intraOpThreads);
    if (!m_scope.isEmpty())
        parts << tr("kernels of %1 (selected in the module tree)").arg(formatModulePath(m_scope.toStdString()));
    if (m_source->computingTable())
        parts << tr("grouping the kernel table…");
    QString iterations = tr("%n iteration(s)", nullptr, run->iterations);
    if (run->warmupIterations > 0)
        iterations += tr(" after %n warm-up", nullptr, run->warmupIterations);
    parts << iterations;
    parts << tr("%1 records").arg(formatCount(qint64(run->records.size())));
    if (run->iterations > 0)
        parts << tr("%1 per iteration").arg(formatDuration(double(run->wallNs) / 1000.0 / run->iterations));
    if (run->cancelled)
        parts << tr("cancelled");
    if (run->droppedRecords > 0)
        parts << tr("%1 records dropped").arg(formatCount(qint64(run->droppedRecords)));
    if (!m_origin.isEmpty())
        parts << tr("from %1").arg(m_origin);
    return parts.join(QStringLiteral(" · "));
}

bool ProfilePage::replacedByRunningProfile(const kforge::ProfileRun& run) const
{
    if (!m_controller || !m_controller->isRunning())
        return false;
    const auto kind = m_controller->lastKind();
    return kind == ProfileController::Kind::Compare || (kind == ProfileController::Kind::Baseline && !run.usedPlan) ||
           (kind == ProfileController::Kind::Plan && run.usedPlan);
}

void ProfilePage::setRunning(bool running)
{
    updateHeader(); // marks the run a new one replaces, and unmarks it
    m_progress->setVisible(running);
    m_progressText->setVisible(running);
    m_progressText->clear();
    m_cancelButton->setVisible(running);
    m_warmupBox->setEnabled(!running);
    m_iterationsBox->setEnabled(!running);
    m_deviceCombo->setEnabled(!running);
    if (running) {
        m_progress->setRange(0, 0); // until the first forward reports
        m_progress->setValue(0);
    }
}

void ProfilePage::showProgress(int done, int total, const QString& stage)
{
    m_progress->setRange(0, total);
    m_progress->setValue(done);
    m_progress->setFormat(QStringLiteral("%p%"));
    if (m_controller)
        m_progressText->setText(
            progressText(stage, done, total, m_controller->warmupIterations(), m_controller->iterations()));
}

bool ProfilePage::selectRecordRow(int recordIndex, bool showTable)
{
    const int row = m_statsModel->rowOfRecord(recordIndex);
    if (row < 0)
        return false;
    QModelIndex index = m_statsProxy->mapFromSource(m_statsModel->index(row, KernelStatsModel::KeyColumn));
    if (!index.isValid()) { // filtered out: shown when the user asked for this row, else left as it is
        if (!showTable)
            return true;
        m_filterEdit->clear();
        index = m_statsProxy->mapFromSource(m_statsModel->index(row, KernelStatsModel::KeyColumn));
    }
    if (showTable)
        m_tabs->setCurrentWidget(m_kernelsTab);
    m_kernelTable->setCurrentIndex(index);
    m_kernelTable->selectRow(index.row());
    m_kernelTable->scrollTo(index);
    return true;
}

QWidget* ProfilePage::subView(const QString& name) const
{
    if (name == QLatin1String("kernels"))
        return m_kernelsTab;
    if (name == QLatin1String("flame") || name == QLatin1String("diff-flame"))
        return m_flame;
    if (name == QLatin1String("chart"))
        return m_chart;
    if (name == QLatin1String("timeline"))
        return m_timelineTab;
    if (name == QLatin1String("comparison"))
        return m_comparisonTab;
    if (name == QLatin1String("memory"))
        return m_memory;
    return nullptr;
}

void ProfilePage::showSubView(const QString& name)
{
    // The differential flame graph: the plan's run, coloured by speedup against the baseline's.
    if (name == QLatin1String("diff-flame") && m_results->both()) {
        setShown(Shown::Plan);
        m_flame->differentialBox()->setChecked(true);
    }
    if (QWidget* view = subView(name))
        m_tabs->setCurrentWidget(view);
}

void ProfilePage::focusFilter()
{
    m_tabs->setCurrentWidget(m_kernelsTab);
    m_filterEdit->setFocus(Qt::ShortcutFocusReason);
    m_filterEdit->selectAll();
}

} // namespace kforge::ui

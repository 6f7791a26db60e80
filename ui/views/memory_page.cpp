// SPDX-License-Identifier: Apache-2.0
#include "views/memory_page.h"

#include "item_models/format.h"
#include "item_models/memory_tables.h"

#include <kforge/memory_profile.h>

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace kforge::ui {
namespace {

QString bytesText(std::int64_t bytes) { return QString::fromStdString(kforge::bytesText(double(bytes))); }

// "9.02 MiB in blocks.0.mlp (gelu)"
QString peakText(const kforge::MemorySummary& memory)
{
    QString text = MemoryPage::tr("%1 in %2").arg(bytesText(memory.peakBytes), formatModulePath(memory.peakModule));
    if (!memory.peakFunction.empty())
        text += QStringLiteral(" (%1)").arg(QString::fromStdString(memory.peakFunction));
    return text;
}

QLabel* makeHeading(QWidget* parent, const QString& name)
{
    auto* heading = new QLabel(parent);
    heading->setObjectName(name);
    heading->setWordWrap(true);
    heading->setTextFormat(Qt::RichText);
    heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return heading;
}

} // namespace

MemoryPage::MemoryPage(QWidget* parent)
    : QWidget(parent), m_placeholder(new QLabel(this)), m_tables(new QWidget(this)),
      m_summary(makeHeading(m_tables, QStringLiteral("memorySummary"))), m_holders(new PeakHoldersModel(this)),
      m_functions(new FunctionMemoryModel(this)), m_driver(new DriverMemoryModel(this)),
      m_holdersTable(new QTableView(m_tables)), m_functionsTable(new QTableView(m_tables)),
      m_driverTable(new QTableView(m_tables)),
      m_functionsHeading(makeHeading(m_tables, QStringLiteral("memoryFunctionsHeading"))),
      m_driverHeading(makeHeading(m_tables, QStringLiteral("memoryDriverHeading")))
{
    setObjectName(QStringLiteral("memoryPage"));
    m_placeholder->setObjectName(QStringLiteral("memoryPlaceholder"));
    m_placeholder->setWordWrap(true);
    m_placeholder->setTextFormat(Qt::RichText);
    m_placeholder->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_placeholder->setContentsMargins(12, 12, 12, 12);
    m_holdersTable->setObjectName(QStringLiteral("memoryHolders"));
    m_functionsTable->setObjectName(QStringLiteral("memoryFunctions"));
    m_driverTable->setObjectName(QStringLiteral("memoryDriver"));

    auto* splitter = new QSplitter(Qt::Vertical, m_tables);
    auto* holdersHeading = makeHeading(splitter, QStringLiteral("memoryHoldersHeading"));
    holdersHeading->setText(tr("<b>Alive at the peak</b>, by the module and function call that allocated it"));
    splitter->addWidget(addSection(splitter, holdersHeading, m_holdersTable, m_holders, PeakHoldersModel::BytesColumn));
    splitter->addWidget(
        addSection(splitter, m_functionsHeading, m_functionsTable, m_functions, FunctionMemoryModel::AllocatedColumn));
    m_driverSection =
        addSection(splitter, m_driverHeading, m_driverTable, m_driver, DriverMemoryModel::AllocatedColumn);
    splitter->addWidget(m_driverSection);

    auto* tablesLayout = new QVBoxLayout(m_tables);
    tablesLayout->setContentsMargins(0, 0, 0, 0);
    m_summary->setContentsMargins(4, 4, 4, 0);
    tablesLayout->addWidget(m_summary);
    tablesLayout->addWidget(splitter, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_placeholder, 1);
    layout->addWidget(m_tables, 1);
    showMemory(nullptr, nullptr);
}

QWidget* MemoryPage::addSection(QWidget* parent, QLabel* heading, QTableView* table, QAbstractItemModel* model,
                                int sortColumn)
{
    auto* proxy = new QSortFilterProxyModel(table);
    proxy->setSourceModel(model);
    proxy->setSortRole(MemoryTableModel::SortRole); // bytes and counts sort as numbers
    table->setModel(proxy);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setAlternatingRowColors(true);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideMiddle); // module paths differ at both ends
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setHighlightSections(false);
    table->setSortingEnabled(true);
    table->sortByColumn(sortColumn, Qt::DescendingOrder); // the largest first, as the engine lists them
    auto* section = new QWidget(parent);
    heading->setParent(section);
    heading->setContentsMargins(4, 4, 4, 0);
    auto* layout = new QVBoxLayout(section);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(heading);
    layout->addWidget(table, 1);
    return section;
}

void MemoryPage::setResults(const ResultsPtr& results, bool showPlan)
{
    const RunResults* shown = !results ? nullptr : showPlan ? &results->plan : &results->baseline;
    const bool pair = results && showPlan && results->both();
    std::shared_ptr<const RunViews> shownViews = shown ? shown->views : nullptr;
    std::shared_ptr<const RunViews> baselineViews = pair ? results->baseline.views : nullptr;
    if (shownViews == m_shownViews && baselineViews == m_baselineViews)
        return; // the same runs: their tables stay as sorted and selected
    m_shownViews = std::move(shownViews);
    m_baselineViews = std::move(baselineViews);
    showMemory(m_shownViews.get(), m_baselineViews.get());
}

void MemoryPage::showMemory(const RunViews* shown, const RunViews* baseline)
{
    const kforge::MemorySummary* memory = shown && shown->memory.recorded ? &shown->memory : nullptr;
    const kforge::MemorySummary* before = memory && baseline && baseline->memory.recorded ? &baseline->memory : nullptr;
    m_holders->setSummary(memory);
    m_functions->setSummaries(memory, before);
    m_driver->setSummary(memory);
    m_placeholder->setVisible(!memory);
    m_tables->setVisible(memory != nullptr);
    if (!memory) {
        m_placeholder->setText(
            shown ? tr("This run recorded no memory. Tick <b>Record memory</b> in the Profile page's bar and profile "
                       "again to see the forward's peak, what was alive at it, and the bytes each function and "
                       "provider allocated (<code>kforge profile --memory</code> on the command line).")
                  : tr("No profile yet. Tick <b>Record memory</b> in the Profile page's bar and run a profile (F6) to "
                       "see the forward's peak, what was alive at it, and the bytes each function and provider "
                       "allocated."));
        m_summary->clear();
        return;
    }
    QString summary = tr("<b>Peak %1</b> per forward, above its start").arg(peakText(*memory).toHtmlEscaped());
    if (before)
        summary += tr(" · baseline: %1").arg(peakText(*before).toHtmlEscaped());
    m_summary->setText(summary);
    m_functionsHeading->setText(before ? tr("<b>Per function and provider</b>, per forward; Δ: against the "
                                            "baseline's calls of the same function, for as many calls")
                                       : tr("<b>Per function and provider</b>, per forward"));
    m_functionsTable->resizeColumnsToContents();
    m_holdersTable->resizeColumnsToContents();
    const bool driver = !memory->driverModules.empty();
    m_driverSection->setVisible(driver);
    if (driver) {
        m_driverHeading->setText(
            tr("<b>Device memory through the driver</b>, per forward: peak %1 above the forward's start (cudaMalloc "
               "and its frees: the caching allocator's segments and what bypasses it)")
                .arg(bytesText(memory->driverPeakBytes)));
        m_driverTable->resizeColumnsToContents();
    }
}

} // namespace kforge::ui

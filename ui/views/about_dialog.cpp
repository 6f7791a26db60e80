// SPDX-License-Identifier: Apache-2.0
#include "about_dialog.h"

#include "application/system_info.h"

#include <kforge/version.h>

#include <QClipboard>
#include <QDialogButtonBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSvgRenderer>
#include <QVBoxLayout>

namespace kforge::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Rendered at the screen's pixel ratio: the logo stays sharp on high-DPI screens.
QPixmap renderSvg(const QString& resource, int size, qreal devicePixelRatio)
{
    QPixmap pixmap(QSize(size, size) * devicePixelRatio);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    QSvgRenderer(resource).render(&painter);
    painter.end();
    pixmap.setDevicePixelRatio(devicePixelRatio);
    return pixmap;
}

} // namespace

AboutDialog::AboutDialog(QWidget* parent)
    : QDialog(parent), m_text(new QPlainTextEdit(this)), m_copy(new QPushButton(tr("&Copy to Clipboard"), this))
{
    setObjectName(QStringLiteral("aboutDialog"));
    setWindowTitle(tr("About KForge Studio"));
    auto* logo = new QLabel(this);
    logo->setPixmap(renderSvg(QStringLiteral(":/icons/kforge.svg"), 64, devicePixelRatioF()));
    auto* title = new QLabel(tr("<h3>KForge Studio %1</h3>Kernel providers for LibTorch models: see, plan and "
                                "measure them.")
                                 .arg(QStringLiteral(KFORGE_VERSION_STRING)),
                             this);
    title->setWordWrap(true);
    auto* header = new QHBoxLayout;
    header->addWidget(logo);
    header->addWidget(title, 1);

    m_text->setObjectName(QStringLiteral("aboutReport"));
    m_text->setReadOnly(true);
    m_text->setPlainText(reportText());
    m_copy->setObjectName(QStringLiteral("copyReport"));
    m_copy->setToolTip(tr("For bug reports: the versions and devices below, as text"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_copy, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_copy, &QPushButton::clicked, this, &AboutDialog::copyToClipboard);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_text, 1);
    layout->addWidget(buttons);
    resize(560, 380);
}

QString AboutDialog::reportText()
{
    const kforge::SystemReport& report = cachedSystemReport();
    QStringList lines;
    lines << tr("KForge %1").arg(QStringLiteral(KFORGE_VERSION_STRING));
    lines << tr("Qt %1 (built against %2)").arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
    lines << tr("LibTorch %1").arg(qs(report.torchVersion));
    lines << (report.torchCudaBuild
                  ? tr("CUDA %1 (the toolkit LibTorch was built with)").arg(qs(report.torchCudaVersion))
                  : tr("CUDA: not in this LibTorch build"));
    lines << (report.cuptiLinked ? tr("CUPTI %1").arg(qs(report.cuptiVersion)) : tr("CUPTI: not linked"));
    lines << tr("Kernel tracing: %1").arg(report.canTrace ? tr("available") : qs(report.traceStatus));
    if (report.cudaDevices.empty())
        lines << tr("CUDA devices: none visible");
    for (const std::string& device : report.cudaDevices)
        lines << tr("CUDA device %1").arg(qs(device));
    lines << tr("Interposer: %1")
                 .arg(report.interposer.selfTestPassed ? tr("self-test passed")
                                                       : qs(report.interposer.selfTestMessage));
    return lines.join(QLatin1Char('\n'));
}

QString AboutDialog::text() const { return m_text->toPlainText(); }

QPushButton* AboutDialog::copyButton() const { return m_copy; }

void AboutDialog::copyToClipboard() const { QGuiApplication::clipboard()->setText(text()); }

} // namespace kforge::ui

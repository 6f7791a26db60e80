// SPDX-License-Identifier: Apache-2.0
#include "views/start_page.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace kforge::ui {
namespace {

// Links carry what they open: "model:SOURCE" or "document:PATH", percent-encoded.
QString link(const QString& kind, const QString& target, const QString& text)
{
    return QStringLiteral("<a href=\"%1:%2\">%3</a>")
        .arg(kind, QString::fromLatin1(QUrl::toPercentEncoding(target)), text.toHtmlEscaped());
}

QLabel* makeLinks(QWidget* parent, const QString& name)
{
    auto* label = new QLabel(parent);
    label->setObjectName(name);
    label->setTextFormat(Qt::RichText);
    label->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    label->setWordWrap(true);
    return label;
}

} // namespace

StartPage::StartPage(QWidget* parent)
    : QWidget(parent), m_builtins(makeLinks(this, QStringLiteral("startBuiltins"))),
      m_recent(makeLinks(this, QStringLiteral("startRecent")))
{
    setObjectName(QStringLiteral("startPage"));
    auto* title = new QLabel(tr("<h2>KernelForge Studio</h2>"), this);
    auto* hint =
        new QLabel(tr("Open a TorchScript model or a torch.export package (Ctrl+O), or drop a file here."), this);
    hint->setWordWrap(true);
    auto* open = new QPushButton(tr("Open Model…"), this);
    open->setObjectName(QStringLiteral("startOpen"));

    auto* column = new QWidget(this);
    column->setMaximumWidth(640);
    auto* inner = new QVBoxLayout(column);
    inner->addWidget(title);
    inner->addWidget(hint);
    inner->addWidget(open, 0, Qt::AlignLeft);
    inner->addSpacing(12);
    inner->addWidget(m_builtins);
    inner->addSpacing(12);
    inner->addWidget(m_recent);
    inner->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(column, 1, Qt::AlignHCenter);

    connect(open, &QPushButton::clicked, this, &StartPage::openFileRequested);
    for (QLabel* label : {m_builtins, m_recent})
        connect(label, &QLabel::linkActivated, this, &StartPage::follow);
    setRecent({}, {});
}

void StartPage::setBuiltins(const QStringList& sources)
{
    QStringList links;
    for (const QString& source : sources)
        links << link(QStringLiteral("model"), source, source.section(QLatin1Char(':'), 1));
    m_builtins->setText(links.isEmpty() ? QString()
                                        : tr("<b>Built-in models</b><br>%1").arg(links.join(QStringLiteral(" · "))));
}

void StartPage::setRecent(const QStringList& models, const QStringList& documents)
{
    QStringList parts;
    if (!models.isEmpty()) {
        QStringList links;
        for (const QString& source : models)
            links << link(QStringLiteral("model"), source, QDir::toNativeSeparators(source));
        parts << tr("<b>Recent models</b><br>%1").arg(links.join(QStringLiteral("<br>")));
    }
    if (!documents.isEmpty()) {
        QStringList links;
        for (const QString& path : documents)
            links << link(QStringLiteral("document"), path, QFileInfo(path).fileName()) +
                         QStringLiteral(" <small>%1</small>")
                             .arg(QDir::toNativeSeparators(QFileInfo(path).absolutePath()).toHtmlEscaped());
        parts << tr("<b>Recent plans and profiles</b><br>%1").arg(links.join(QStringLiteral("<br>")));
    }
    m_recent->setText(parts.join(QStringLiteral("<br><br>")));
    m_recent->setVisible(!parts.isEmpty());
}

void StartPage::follow(const QString& target)
{
    const QString kind = target.section(QLatin1Char(':'), 0, 0);
    const QString value = QUrl::fromPercentEncoding(target.section(QLatin1Char(':'), 1).toLatin1());
    if (kind == QLatin1String("model"))
        Q_EMIT modelRequested(value);
    else if (kind == QLatin1String("document"))
        Q_EMIT documentRequested(value);
}

} // namespace kforge::ui

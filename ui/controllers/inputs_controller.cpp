// SPDX-License-Identifier: Apache-2.0
#include "controllers/inputs_controller.h"

#include "application/recent_files.h"
#include "controllers/session_owner.h"
#include "item_models/format.h"

#include <kforge/model_session.h>

#include <QDir>
#include <QFileInfo>

#include <exception>

namespace kforge::ui {
namespace {

QStringList toStrings(const std::vector<std::string>& values)
{
    QStringList out;
    for (const std::string& value : values)
        out << QString::fromStdString(value);
    return out;
}

} // namespace

InputsController::InputsController(SessionOwner* owner, RecentFiles* recent, QObject* parent)
    : QObject(parent), m_owner(owner), m_recent(recent)
{
}

QString InputsController::refusal() const
{
    if (!m_owner->session())
        return tr("No model is loaded.");
    return m_owner->isBusy() ? m_owner->refusal(SessionOwner::Activity::Forward) : QString();
}

QStringList InputsController::argumentNames() const
{
    return m_owner->session() ? toStrings(m_owner->session()->forwardArgumentNames()) : QStringList();
}

QStringList InputsController::described() const
{
    return m_owner->session() ? toStrings(m_owner->session()->describeInputs()) : QStringList();
}

bool InputsController::setSpecs(const QStringList& specs, QString* error)
{
    if (const QString busy = refusal(); !busy.isEmpty()) {
        if (error)
            *error = busy;
        return false;
    }
    std::vector<std::string> values;
    for (const QString& spec : specs)
        values.push_back(spec.toStdString());
    try {
        m_owner->session()->setInputSpecs(values);
    } catch (const std::exception& e) {
        if (error)
            *error = oneLine(e.what());
        Q_EMIT statusMessage(oneLine(e.what()));
        return false;
    }
    Q_EMIT statusMessage(tr("Inputs: %1").arg(specs.join(QStringLiteral(", "))));
    apply(tr("Random tensors from the specs %1").arg(specs.join(QStringLiteral("; "))),
          QStringLiteral("specs:") + specs.join(QLatin1Char(';')));
    return true;
}

bool InputsController::loadFile(const QString& path, QString* error)
{
    if (const QString busy = refusal(); !busy.isEmpty()) {
        if (error)
            *error = busy;
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    try {
        m_owner->session()->loadInputsFile(absolute.toStdString());
    } catch (const std::exception& e) {
        if (error)
            *error = oneLine(e.what());
        Q_EMIT statusMessage(oneLine(e.what()));
        return false;
    }
    Q_EMIT statusMessage(
        tr("Inputs from %1: %2").arg(QFileInfo(absolute).fileName(), described().join(QStringLiteral(", "))));
    apply(tr("From the file %1").arg(QDir::toNativeSeparators(absolute)), QStringLiteral("file:") + absolute);
    return true;
}

void InputsController::sessionOpened(QStringList& warnings)
{
    apply(m_owner->session()->hasInputs() ? tr("The model's example inputs") : QString(), {});
    const QString remembered = m_remember ? m_recent->inputsFor(m_owner->source()) : QString();
    QString error;
    bool ok = true;
    if (remembered.startsWith(QLatin1String("file:")))
        ok = loadFile(remembered.mid(5), &error);
    else if (remembered.startsWith(QLatin1String("specs:")))
        ok = setSpecs(remembered.mid(6).split(QLatin1Char(';'), Qt::SkipEmptyParts), &error);
    if (!ok)
        warnings << tr("the inputs used last time could not be applied (%1)").arg(error);
}

void InputsController::apply(const QString& source, const QString& remembered)
{
    Q_EMIT changed(argumentNames(), described(), source);
    if (m_remember && !remembered.isEmpty() && !m_owner->source().isEmpty())
        m_recent->setInputsFor(m_owner->source(), remembered);
}

} // namespace kforge::ui

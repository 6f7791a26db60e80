// SPDX-License-Identifier: Apache-2.0
#pragma once
// The inputs of the session's forward: specs (random tensors, "float32[1,8]" per argument) or a torch.save file,
// as `kforge run --input` and `--inputs-file`, and remembered per model in the recent files so that the next
// opening of the model gets them back.
#include <QObject>
#include <QStringList>

namespace kforge::ui {

class RecentFiles;
class SessionOwner;

class InputsController : public QObject {
    Q_OBJECT
public:
    InputsController(SessionOwner* owner, RecentFiles* recent, QObject* parent = nullptr);

    // False with a one-line `error` (no model, the session is in use, a bad spec or file); changed() follows success.
    bool setSpecs(const QStringList& specs, QString* error = nullptr);
    bool loadFile(const QString& path, QString* error = nullptr);
    // The new session's inputs: its examples, then the ones given last time; what no longer applies is a warning.
    void sessionOpened(QStringList& warnings);
    QString refusal() const; // why the inputs cannot change now; empty when they can

    QStringList argumentNames() const; // of the forward
    QStringList described() const;     // dtype[shape] per input
    void setRemembering(bool remember) { m_remember = remember; }

Q_SIGNALS:
    // `source`: where the inputs come from ("From the file …"), for the Inputs panel.
    void changed(const QStringList& arguments, const QStringList& described, const QString& source);
    void statusMessage(const QString& message);

private:
    void apply(const QString& source, const QString& remembered);

    SessionOwner* m_owner;
    RecentFiles* m_recent;
    bool m_remember = true;
};

} // namespace kforge::ui

// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QDialog>

class QPlainTextEdit;
class QPushButton;

namespace kforge::ui {

// Help › About: what this build and machine are made of (kforge, Qt, LibTorch, CUDA, CUPTI, the CUDA
// devices, the interposer's self-test), as plain text a user can copy into a bug report.
class AboutDialog : public QDialog {
    Q_OBJECT
public:
    explicit AboutDialog(QWidget* parent = nullptr);

    // The report the dialog shows, one fact per line.
    static QString reportText();
    QString text() const;
    QPushButton* copyButton() const;
    void copyToClipboard() const;

private:
    QPlainTextEdit* m_text;
    QPushButton* m_copy;
};

} // namespace kforge::ui

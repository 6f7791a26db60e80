// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QRegularExpression>
#include <QSortFilterProxyModel>

namespace kforge::ui {

// The module tree filtered by a text the user types: a module is kept when its path, type or the functions
// of its own forward match, and with it the path from the root down to it (recursive filtering). The text is
// a case-insensitive substring, or a regular expression in regex mode.
class ModuleTreeFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit ModuleTreeFilterModel(QObject* parent = nullptr);

    void setFilter(const QString& text, bool regex);
    QString filterText() const;
    // Why the regular expression is not valid ("" when it is, or in substring mode); nothing is hidden then.
    QString filterError() const;
    // The first row, depth first, that matches the filter itself (not an ancestor kept for a match below it); the
    // first row when no filter is set; invalid when nothing is shown.
    QModelIndex firstMatch() const;

Q_SIGNALS:
    void filterChanged();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool matches(const QString& value) const;

    QString m_text;
    bool m_regex = false;
    QRegularExpression m_expression;
};

} // namespace kforge::ui

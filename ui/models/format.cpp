#include "format.h"

#include <QLocale>
#include <QStringList>

namespace kforge::ui {

QString formatCount(std::int64_t count) { return QLocale().toString(qint64(count)); }

QString formatCompactCount(std::int64_t count)
{
    const QLocale locale;
    if (count >= 1'000'000'000)
        return locale.toString(double(count) / 1e9, 'f', 2) + QStringLiteral(" G");
    if (count >= 1'000'000)
        return locale.toString(double(count) / 1e6, 'f', 2) + QStringLiteral(" M");
    if (count >= 10'000)
        return locale.toString(double(count) / 1e3, 'f', 1) + QStringLiteral(" k");
    return locale.toString(qint64(count));
}

QString formatBytes(std::int64_t bytes) { return QLocale().formattedDataSize(bytes); }

QString formatFunctions(const std::map<std::string, int>& functions)
{
    QStringList parts;
    for (const auto& [name, calls] : functions) {
        if (calls > 0)
            parts << QStringLiteral("%1×%2").arg(QString::fromStdString(name)).arg(calls);
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace kforge::ui

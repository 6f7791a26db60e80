// SPDX-License-Identifier: Apache-2.0
#include "application/system_info.h"

#include <QObject>

#include <exception>

namespace kforge::ui {

const kforge::SystemReport& cachedSystemReport()
{
    static const kforge::SystemReport report = [] {
        try {
            return kforge::systemReport();
        } catch (const std::exception& e) {
            kforge::SystemReport empty;
            empty.traceStatus = e.what();
            return empty;
        }
    }();
    return report;
}

bool cudaDeviceVisible() { return !cachedSystemReport().cudaDevices.empty(); }

QString cudaUnavailableExplanation()
{
    if (cudaDeviceVisible())
        return {};
    const kforge::SystemReport& report = cachedSystemReport();
    const QString torch =
        report.torchCudaBuild
            ? QObject::tr("LibTorch %1 built with CUDA %2, 0 CUDA devices")
                  .arg(QString::fromStdString(report.torchVersion), QString::fromStdString(report.torchCudaVersion))
            : QObject::tr("LibTorch %1 is a CPU-only build").arg(QString::fromStdString(report.torchVersion));
    return QObject::tr("CUDA graph capture needs a CUDA device; none is visible on this machine (torch reports %1).")
        .arg(torch);
}

QString deviceDisplayName(const QString& sessionDevice)
{
    if (!sessionDevice.startsWith(QLatin1String("cuda"), Qt::CaseInsensitive))
        return QObject::tr("CPU");
    // "cuda" is device 0; the report lists "0: NVIDIA H200 (sm_90, 139.8 GiB)".
    const QString index = sessionDevice.section(QLatin1Char(':'), 1, 1);
    const QString prefix = (index.isEmpty() ? QStringLiteral("0") : index) + QStringLiteral(": ");
    for (const std::string& device : cachedSystemReport().cudaDevices) {
        const QString name = QString::fromStdString(device);
        if (name.startsWith(prefix))
            return QObject::tr("CUDA %1").arg(name);
    }
    return sessionDevice.toUpper();
}

} // namespace kforge::ui
